// serialize/hdf5_handles.h
//
// What every HDF5 caller of serialize/ shares: Hdf5Mutex(), the lock every
// HDF5 call is made under; Hid, an identifier closed with its own close
// function when dropped; and Hdf5Message(), HDF5's innermost error message.
// Hid and Hdf5Message() are used only under Hdf5Mutex(): HDF5's state is
// unguarded.
#ifndef GRAPHGC_SERIALIZE_HDF5_HANDLES_H_
#define GRAPHGC_SERIALIZE_HDF5_HANDLES_H_

#include <string>

#include "hdf5.h"
#include "util/mutex.h"

namespace graphgc {

// The process-wide lock every HDF5 call is made under: Debian's HDF5 is the
// serial build, whose library state is unguarded. Never destroyed, so a
// call during static destruction still finds it.
inline Mutex& Hdf5Mutex() {
  static Mutex* mu = new Mutex;
  return *mu;
}

class Hid {
 public:
  Hid(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  ~Hid() {
    if (id_ >= 0) close_(id_);
  }
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

// The innermost message of HDF5's error stack ("truncated file: eof =
// ..."), then clears the stack.
inline std::string Hdf5Message() {
  std::string message;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* err, void* data) -> herr_t {
        if (err->desc != nullptr && err->desc[0] != '\0') {
          *static_cast<std::string*>(data) = err->desc;
        }
        return 0;
      },
      &message);
  H5Eclear2(H5E_DEFAULT);
  return message.empty() ? std::string("no detail from HDF5") : message;
}

}  // namespace graphgc

#endif  // GRAPHGC_SERIALIZE_HDF5_HANDLES_H_
