// util/registration.h
//
// Registration<Registry, Key, Release>: a move-only hold on one entry of a
// registry that its holders share weakly (a std::weak_ptr), undone on
// destruction: Reset(), and the destructor, call Release(registry, key)
// once, if the registry still exists; after that, or once moved from, the
// registration holds nothing and its key is Key(). A registration may
// outlive its registry: releasing then does nothing. gc::ListenerRegistration
// and ScopeReservation are two.
//
// Thread safety: one registration is used by one thread at a time;
// Release, which takes the registry's own lock, may run for several
// registrations of one registry at once.
#ifndef GRAPHGC_UTIL_REGISTRATION_H_
#define GRAPHGC_UTIL_REGISTRATION_H_

#include <memory>
#include <utility>

namespace graphgc {

template <typename Registry, typename Key,
          void (*Release)(Registry&, const Key&)>
class Registration {
 public:
  Registration() = default;
  Registration(std::weak_ptr<Registry> registry, Key key)
      : registry_(std::move(registry)), key_(std::move(key)) {}
  Registration(Registration&& other) noexcept
      : registry_(std::exchange(other.registry_, {})),
        key_(std::exchange(other.key_, Key())) {}
  Registration& operator=(Registration&& other) noexcept {
    if (this != &other) {
      Reset();
      registry_ = std::exchange(other.registry_, {});
      key_ = std::exchange(other.key_, Key());
    }
    return *this;
  }
  ~Registration() { Reset(); }

  const Key& key() const { return key_; }

  // Releases the entry now; not an error when there is none (default-made,
  // moved from, already released, or the registry is gone).
  void Reset() {
    std::shared_ptr<Registry> registry = registry_.lock();
    registry_.reset();
    const Key key = std::exchange(key_, Key());
    if (registry != nullptr) Release(*registry, key);
  }

 private:
  std::weak_ptr<Registry> registry_;
  Key key_ = Key();
};

}  // namespace graphgc

#endif  // GRAPHGC_UTIL_REGISTRATION_H_
