// gc/heap.h
//
// gc::Heap: the slot storage the collector works on. Each slot holds one
// node's collector state: the count of strong handles (its root count, kept
// as gc/root_count.h describes), its
// generation, its mark, its out-edges (the slots of its data and control
// inputs) and the node itself as an opaque gc::Object owned by the slot.
//
// Invariants:
//  1. Slots live in fixed chunks that never move, so a handle may keep a
//     pointer to its slot's atomic counter and touch it without a lock.
//  2. A live slot's edges name live slots: a node keeps its inputs alive, so
//     an input is swept only together with every node that reads it.
//  3. A slot is reused only after its generation changed (see node_id.h).
//  4. Generations of age: a node is young from its allocation until it has
//     survived GcPolicy::promote_after collections, then old. Every young
//     node is in young() (in allocation order, with its allocation serial;
//     the list may also hold stale ids of freed slots). An old node's edges
//     reach young nodes only through remembered(): an input edge can point only
//     to an older node, which ages no slower, so the one way an old node comes
//     to read a young one is AddEdge, which records it. A minor collection
//     needs nothing else to see every old-to-young reference.
//  5. Lazy sweeping: a swept object whose DestroyPromptly() was false, or
//     an object the sweep's observer unlinked for it (a dropped scope's
//     name tables), may wait in unreclaimed() (DeferDestruction) until
//     allocation, a safe point or the next collection takes it
//     (TakeUnreclaimed) and destroys it with mu() released. Nothing reaches
//     it meanwhile: a swept object's slot is free or reused, its generation
//     changed, and an unlinked object is in no table.
//
// Thread safety: mu() guards everything but the root counts (atomic; see
// gc/root_count.h for who writes which part), the owner-label table and the pin
// table (each behind its own small Mutex, taken after mu() when both are held,
// never the other way round). Structural changes (allocation, sweeping) take
// mu() exclusively; turning an id back into a strong handle takes it at least
// shared, so it can never race with a sweep.
#ifndef GRAPHGC_GC_HEAP_H_
#define GRAPHGC_GC_HEAP_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "gc/edge_list.h"
#include "gc/node_id.h"
#include "gc/root_count.h"
#include "util/huge_pages.h"
#include "util/mutex.h"

namespace graphgc {

class Graph;
class NodeHandle;

namespace gc {

// What a slot owns: the runtime's node. Destroyed when the node is swept.
class Object {
 public:
  virtual ~Object() = default;
  // Bytes this object holds, for leak reports; an estimate.
  virtual int64_t ApproxBytes() const { return 0; }
  // Whether the collection that sweeps this object destroys it before
  // returning (true: it holds memory or state worth having back at once,
  // such as a variable's buffer), or leaves it to be destroyed as
  // allocation reaches it (false; lazy sweeping, gc/collector.h phase 5).
  // Read once, when the object is allocated.
  virtual bool DestroyPromptly() const { return false; }
};

struct Slot {
  // The root count: unlabelled NodeHandles plus owner-label entries
  // (SlotLabel), in two parts (gc/root_count.h); > 0 makes a root. Read it
  // with Heap::strong_count() or MayBeHeld(), never one part alone.
  std::atomic<int32_t> strong_shared{0};
  std::atomic<int16_t> strong_home{0};
  bool live = false;
  // Written under Heap::mu() (see invariant 4); atomic because a handle's
  // last drop reads it without the lock, to count drops of old roots.
  std::atomic<bool> young{false};
  uint32_t generation = 1;  // guarded by Heap::mu()
  uint32_t mark_epoch = 0;  // == Heap's epoch: marked this cycle
  EdgeList edges;           // 16 bytes (gc/edge_list.h)
  std::unique_ptr<Object> object;

  CountRef strong() {
    return CountRef{.shared = &strong_shared, .home = &strong_home};
  }
  CountRef strong() const {
    // The reads of a const slot's count are loads.
    return const_cast<Slot*>(this)->strong();
  }
};
// Root counts cost no slot bytes: the home part and the flags share the
// eight bytes the shared part's alignment takes. The edges take 16 bytes
// (an absl::InlinedVector<uint32_t, 2> would take 24).
static_assert(sizeof(Slot) <= 40, "a slot outgrew 40 bytes");

// One owner label on one slot: every handle carrying that label on that
// slot points here and counts itself in `handles` (a root count in two
// parts, gc/root_count.h; no lock), and the entry, while it exists, holds
// one count of the slot's root count for all of them. The heap removes the
// entry, under its label lock, when `handles` drops to zero; `text` is
// interned by the heap and lives as long as the entry.
//
// Entries are type-stable: a removed entry goes to the heap's free list and
// is only ever reused as an entry, never freed while the heap lives. A drop
// reads the count's other part after decrementing its own (gc/root_count.h),
// when its handle no longer keeps the entry: a racing last drop elsewhere
// may have removed it, and AcquireLabel reused it, by then. That read is
// still of an entry's count, so at worst it reports a last drop that was
// not; RemoveLabelIfUnused removes only an entry it finds on the slot with a
// count of zero read under the label lock, which no handle can raise.
struct SlotLabel {
  std::atomic<int32_t> handles_shared{0};
  std::atomic<int16_t> handles_home{0};
  const std::string* text = nullptr;

  CountRef handles() {
    return CountRef{.shared = &handles_shared, .home = &handles_home};
  }
  CountRef handles() const { return const_cast<SlotLabel*>(this)->handles(); }
};

// Label text used for roots held by handles that carry no owner label, and
// for nodes pinned by an in-flight run.
inline constexpr absl::string_view kUnlabelledRoot =
    "NodeHandle (no owner label)";
inline constexpr absl::string_view kPinnedRoot = "in-flight Session::Run";

// A young node in allocation order, with its allocation serial: the value of
// Heap::allocations() just after it was allocated.
struct YoungEntry {
  NodeId id;
  int64_t serial = 0;
};

// Lists a collection fills, one entry per swept node (so megabytes for a
// big sweep): from 1 MiB on they are in huge pages (util/huge_pages.h).
using NodeIdList = LargeVector<NodeId>;
using ObjectList = LargeVector<std::unique_ptr<Object>>;

class Heap : public std::enable_shared_from_this<Heap> {
 public:
  static constexpr int kChunkBits = 12;
  static constexpr uint32_t kChunkSize = 1u << kChunkBits;
  static constexpr uint32_t kMaxChunks = 4096;  // 16.7 million slots
  static constexpr uint32_t kMaxSlots = kChunkSize * kMaxChunks;
  // Chunk memory (see chunk_memory_): the first kChunksAlone chunks are
  // allocated one by one, the later ones carved from blocks of
  // kChunksPerBlock.
  static constexpr size_t kChunkBytes = sizeof(Slot) * kChunkSize;
  static constexpr uint32_t kChunksAlone = 64;
  static constexpr uint32_t kChunksPerBlock = 64;
  static constexpr size_t kChunkBlockBytes = kChunkBytes * kChunksPerBlock;

  explicit Heap(Graph* owner) : owner_(owner) {}
  Heap(const Heap&) = delete;
  Heap& operator=(const Heap&) = delete;

  // The graph of this heap; nullptr once Orphan() ran.
  Graph* owner() const { return owner_.load(std::memory_order_acquire); }
  // The thread that made this heap, whose handle copies and drops take no
  // locked instruction (gc/root_count.h).
  HomeThread& home() const { return home_; }
  Mutex& mu() const ABSL_LOCK_RETURNED(mu_) { return mu_; }

  // --- structure (mu() held exclusively) ---

  // Places `object` in a free slot with the given out-edges (live slot
  // indices) and returns the first strong handle to it. Strong guarantee:
  // when it throws (std::bad_alloc), the heap is as it was.
  absl::StatusOr<NodeHandle> Allocate(std::unique_ptr<Object> object,
                                      absl::Span<const uint32_t> edges)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Adds an out-edge from -> to (both live), e.g. a later control input;
  // `from` has fewer than EdgeList::kMaxSize edges. When `from` is old and
  // `to` young, `to` goes into remembered().
  void AddEdge(uint32_t from, uint32_t to) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Frees a live slot: its object is destroyed (or handed back when
  // `keep` is set), its generation bumped, the slot put on the free list.
  std::unique_ptr<Object> Free(uint32_t index, bool keep)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // --- lazy sweeping (invariant 5) ---

  // Whether the object allocated in slot `index` asked to be destroyed
  // promptly (Object::DestroyPromptly); still answers for the object once
  // Free() handed it back, until the slot is allocated again.
  bool DestroysPromptly(uint32_t index) const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return ((prompt_bits_[index >> 6] >> (index & 63)) & 1) != 0;
  }
  // Keeps a swept or unlinked object to be destroyed later (invariant 5).
  void DeferDestruction(std::unique_ptr<Object> object)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    unreclaimed_.push_back(std::move(object));
    unreclaimed_count_.store(unreclaimed_.size(), std::memory_order_relaxed);
  }
  // Room for `more` deferred objects (a big sweep grows the list once).
  void ReserveUnreclaimed(size_t more) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const size_t need = unreclaimed_.size() + more;
    if (need > unreclaimed_.capacity()) {
      unreclaimed_.reserve(std::max(need, 2 * unreclaimed_.capacity()));
    }
  }
  // Moves up to out.size() deferred objects into `out`, newest first, for
  // the caller to destroy once it released mu(); returns how many.
  size_t TakeUnreclaimed(absl::Span<std::unique_ptr<Object>> out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves every deferred object to the end of `out`.
  void TakeAllUnreclaimed(ObjectList& out) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // How many deferred objects wait; read without the lock, so only a hint
  // (exact while the caller holds mu()).
  size_t unreclaimed_count() const {
    return unreclaimed_count_.load(std::memory_order_relaxed);
  }

  // --- lookups (mu() held, shared at least) ---

  // Whether `id` names a live node.
  bool IsLive(NodeId id) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // A new strong handle to a live node (its root count goes up).
  NodeHandle NewHandle(NodeId id) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  NodeId IdOf(uint32_t index) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  const Object* object(uint32_t index) const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return slot(index).object.get();
  }
  Object* mutable_object(uint32_t index) ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return slot(index).object.get();
  }
  absl::Span<const uint32_t> edges(uint32_t index) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return slot(index).edges;
  }
  // Slots ever used; every live index is below it (the TensorFlow
  // num_node_ids() of this heap).
  uint32_t num_slots() const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return num_slots_;
  }
  int64_t live_count() const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return live_count_;
  }
  // Changes whenever a live slot is freed or gains an edge (AddEdge);
  // allocating leaves it alone. While it is unchanged, every id that was
  // live is still live, with the same edges: whoever keeps ids (a session's
  // cached plan, runtime/plan.h) and the value it read with them needs no
  // other check.
  int64_t structure_version() const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return structure_version_;
  }
  int64_t peak_live() const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return peak_live_;
  }
  size_t free_list_size() const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return free_.size();
  }
  // Room for `more` slots in the free list, which Free() adds to: a big
  // sweep grows it at most once (doubling, so sweeps of a few slots each
  // do not reallocate it every time).
  void ReserveFreeSlots(size_t more) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const size_t need = free_.size() + more;
    if (need > free_.capacity()) {
      free_.reserve(std::max(need, 2 * free_.capacity()));
    }
  }

  // --- generations (invariant 4) ---

  // Every young node, oldest first; entries whose id is no longer live are
  // stale and skipped by the collector.
  absl::Span<const YoungEntry> young() const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return young_;
  }
  // Young nodes that an old node has an edge to (they may repeat or be
  // stale, like young()).
  absl::Span<const NodeId> remembered() const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return remembered_;
  }
  // Called by the collector after each collection, once the garbage is
  // freed: every live young node has survived one more collection, and
  // those that have now survived `promote_after` (clamped to 0-100) become
  // old. A node's age is not stored in its slot: the heap keeps the
  // allocation count at each of the last 100 collections, and a node has
  // survived the collections whose count reached its allocation serial. So
  // the nodes to promote are a prefix of young(), and aging costs the
  // promoted nodes, not the young generation: the survivors' slots are
  // neither read nor written. Promoted entries leave young(), and so do
  // `swept_young`: the entries this collection freed, in young() order (a
  // minor collection's garbage, as FindYoungGarbage lists it), dropped by
  // one walk of the list without reading their slots. Other stale entries
  // stay until their age comes (entries out of that order are left too:
  // stale entries are allowed). Stale ids leave remembered(). Returns how
  // many nodes were promoted.
  int64_t AgeSurvivors(int promote_after,
                       absl::Span<const NodeId> swept_young = {})
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The most collections a node waits to be promoted.
  static constexpr int kMaxPromoteAfter = 100;
  // Whether `id` names a live young node (stale list entries do not).
  bool IsYoung(NodeId id) const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return IsLive(id) && slot(id.index).young.load(std::memory_order_relaxed);
  }

  // Slot access for the collector's phases.
  Slot& slot(uint32_t index) const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return chunks_[index >> kChunkBits][index & (kChunkSize - 1)];
  }
  // The slot of a node the caller holds a strong handle or a pin to (or
  // whose last handle it has just dropped, to count the drop), without the
  // lock: chunks never move (invariant 1), and the slot's chunk pointer was
  // written before the handle or pin existed.
  Slot& HeldSlot(uint32_t index) const ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return chunks_[index >> kChunkBits][index & (kChunkSize - 1)];
  }
  // Root count of a slot: > 0 while a strong handle exists (each owner
  // label on the slot counts once, however many handles carry it).
  int32_t strong_count(uint32_t index) const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return ReadCount(home_, slot(index).strong());
  }
  // Whether a live slot is a root by its count: true also when the home
  // thread was changing the count while it was read (gc/root_count.h).
  bool MayBeHeld(const Slot& s) const {
    return gc::MayBeHeld(home_, s.strong());
  }

  // --- roots (no lock needed) ---

  // Times a node's last strong handle went away, as far as the drops saw
  // (see maybe_drop()); the collector compares it with the value at its
  // last collection to know whether anything could have become garbage.
  int64_t drops() const { return drops_.Total(); }
  int64_t allocations() const {
    return allocations_.load(std::memory_order_acquire);
  }
  // Of drops(), those of old nodes: their garbage, if any, waits for a full
  // collection, so the collector schedules one (see collector.h).
  int64_t old_drops() const { return old_drops_.Total(); }
  // Whether a drop on another thread may have taken a root count to zero
  // since a collection last lowered the flag (gc/root_count.h's
  // CountDownRoot: such a drop and a racing one at home may both miss the
  // zero): the collector takes it as a drop. maybe_old_drop(): the same for
  // an old node's count, which full collections alone lower.
  bool maybe_drop() const {
    return maybe_drop_.load(std::memory_order_seq_cst);
  }
  bool maybe_old_drop() const {
    return maybe_old_drop_.load(std::memory_order_seq_cst);
  }
  // Lowers maybe_drop(), and maybe_old_drop() when `full`, for a collection
  // that reads the root counts after this call; only on the home thread,
  // where the collection reads every count the home thread stored (another
  // thread might read a home count whose store has not reached memory yet,
  // and lose the drop the flag stood for). A drop on another thread either
  // raises a flag after it is lowered, or its count's change is read after
  // the lowering (the flags, their raising and this are sequentially
  // consistent, and a fence follows).
  void LowerMaybeDrops(bool full) {
    if (!home_.IsCurrent()) return;
    maybe_drop_.exchange(false, std::memory_order_seq_cst);
    if (full) maybe_old_drop_.exchange(false, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }

  // Owner labels of the handles holding a slot, with how many hold it each;
  // handles without a label are counted under kUnlabelledRoot.
  std::vector<std::pair<std::string, int32_t>> RootLabels(uint32_t index) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_) ABSL_LOCKS_EXCLUDED(labels_mu_);
  // How many distinct labels and (slot, label) entries the table holds; for
  // tests that bookkeeping stays bounded.
  size_t label_table_size() const ABSL_LOCKS_EXCLUDED(labels_mu_);

  // Pins: slots an in-flight run uses are roots until unpinned. Pin() needs
  // mu() held (shared at least) and live slots.
  uint64_t Pin(std::vector<uint32_t> slots) ABSL_SHARED_LOCKS_REQUIRED(mu_)
      ABSL_LOCKS_EXCLUDED(pins_mu_);
  void Unpin(uint64_t pin) ABSL_LOCKS_EXCLUDED(pins_mu_);
  // Appends every pinned slot's index (with repeats) to `out`.
  void AppendPinned(std::vector<uint32_t>& out) const
      ABSL_LOCKS_EXCLUDED(pins_mu_);
  bool IsPinned(uint32_t index) const ABSL_LOCKS_EXCLUDED(pins_mu_);
  size_t pin_count() const ABSL_LOCKS_EXCLUDED(pins_mu_);

  // --- verification (tests and debug runs) ---

  // Checks invariants 1-4 above slot by slot, and that every pinned slot is
  // live; the first broken one is returned as an InternalError naming the
  // invariant and the slots. O(slots + edges).
  absl::Status VerifyForTesting() const ABSL_SHARED_LOCKS_REQUIRED(mu_)
      ABSL_LOCKS_EXCLUDED(pins_mu_);
  // Checks the mark phase's postcondition (gc/marker.h) for the cycle
  // `epoch`: every root is marked and every input of a marked slot is
  // marked; with `young_only`, among young slots, counting young slots an
  // old one reads as roots.
  absl::Status VerifyMarkingForTesting(uint32_t epoch, bool young_only) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_) ABSL_LOCKS_EXCLUDED(pins_mu_);
  // When set, every collection of this heap runs VerifyForTesting() (and,
  // after marking, VerifyMarkingForTesting()) between its phases and stops
  // the program with the phase and the broken invariant on failure.
  void SetVerifyCollectionsForTesting(bool on) {
    verify_collections_.store(on, std::memory_order_relaxed);
  }
  bool VerifyCollectionsForTesting() const {
    return verify_collections_.load(std::memory_order_relaxed);
  }
  // The free list and the young list, for tests that break the heap on
  // purpose to see the verifier catch it.
  LargeVector<uint32_t>& FreeListForTesting()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return free_;
  }
  LargeVector<YoungEntry>& YoungListForTesting()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return young_;
  }

  // Sum of every slot's root count: non-zero when handles outlive the heap.
  int64_t TotalStrongCount() const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  // For a graph destroyed while handles are alive: destroys every node
  // (their slots stop being live, so weak handles lock to nothing), forgets
  // the young and remembered lists and the owner. What handles touch (slot
  // counters, the label table, the drop counters) stays valid for as long
  // as the heap lives; nothing may allocate, collect or pin afterwards.
  void Orphan() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

 private:
  friend class ::graphgc::NodeHandle;

  // Handle bookkeeping, lock-free but for a label's first and last handle
  // on a slot. A handle counts and uncounts itself (gc/handle.h); these are
  // what it calls when its counter reaches zero.
  // One root count fewer on slot `index`.
  void DropStrong(uint32_t index) {
    NoteRootDrop(CountDownRoot(home_, HeldSlot(index).strong()), index);
  }
  // What a drop of slot `index`'s root count (CountDownRoot) found.
  void NoteRootDrop(RootDrop drop, uint32_t index) {
    if (drop == RootDrop::kLast) {
      NoteDrop(HeldSlot(index));
    } else if (drop == RootDrop::kMaybeLast) {
      NoteMaybeDrop(HeldSlot(index));
    }
  }
  // A slot's root count reached zero: counts the drop for the collector.
  void NoteDrop(const Slot& s) {
    if (!s.young.load(std::memory_order_relaxed)) old_drops_.Add(home_);
    drops_.Add(home_);
  }
  // A drop on another thread that may have taken a slot's root count to
  // zero: raises the flags the collector reads as a drop. Loaded first, so
  // that a flag already up is only read (a plain load on x86), not written
  // again: its cache line stays shared among the threads that drop, and the
  // store (a locked instruction, as it is sequentially consistent) comes
  // once per collection.
  void NoteMaybeDrop(const Slot& s) {
    if (!s.young.load(std::memory_order_relaxed)) Raise(maybe_old_drop_);
    Raise(maybe_drop_);
  }
  static void Raise(std::atomic<bool>& flag) {
    if (!flag.load(std::memory_order_seq_cst)) {
      flag.store(true, std::memory_order_seq_cst);
    }
  }
  // The entry of owner label `text` on slot `index`, a slot the caller
  // holds, with one more handle counted on it. Made on first use, with the
  // text interned and one root count added to the slot for the entry.
  SlotLabel* AcquireLabel(uint32_t index, absl::string_view text)
      ABSL_LOCKS_EXCLUDED(labels_mu_);
  // `label` (of slot `index`) counted its last handle: takes labels_mu_ to
  // remove the entry, with its root count (and the text, if no other entry
  // uses it), unless AcquireLabel revived it meanwhile.
  void RemoveLabelIfUnused(uint32_t index, const SlotLabel* label)
      ABSL_LOCKS_EXCLUDED(labels_mu_);

  std::atomic<Graph*> owner_;
  mutable HomeThread home_;
  mutable Mutex mu_;
  // Chunk memory. The first kChunksAlone chunks are allocated one by one
  // (160 KiB each: a small graph takes little); each later one is carved
  // from a block of kChunksPerBlock chunks, 10 MiB, five whole huge pages
  // (util/huge_pages.h): a million nodes' slots are 40 MB, and faulted in
  // 4 KiB at a time they would be a large share of building such a graph.
  // Declared before chunks_, whose slots are destroyed first.
  std::vector<LargeBlock> chunk_memory_ ABSL_GUARDED_BY(mu_);
  // Destroys a chunk's slots (its memory is chunk_memory_'s).
  struct DestroySlots {
    void operator()(Slot* chunk) const noexcept;
  };
  // Makes chunk `c` (the next one: c == the chunks made so far), its slots
  // value-initialised. Throws std::bad_alloc and then changes nothing.
  std::unique_ptr<Slot[], DestroySlots> NewChunk(uint32_t c)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::unique_ptr<Slot[], DestroySlots> chunks_[kMaxChunks] ABSL_GUARDED_BY(
      mu_);
  uint32_t num_slots_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t live_count_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t structure_version_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t peak_live_ ABSL_GUARDED_BY(mu_) = 0;
  // The lists that grow with the heap (free slots, deferred objects, young
  // nodes) are in huge pages from 1 MiB on (util/huge_pages.h): a sweep
  // of 500,000 nodes fills 6 MB of free and deferred lists, which in 4 KiB
  // pages would be a fault each.
  LargeVector<uint32_t> free_ ABSL_GUARDED_BY(mu_);
  // Slot i's DestroysPromptly() is bit i % 64 of word i / 64.
  std::vector<uint64_t> prompt_bits_ ABSL_GUARDED_BY(mu_);
  // Invariant 5; unreclaimed_count_ mirrors its size for lock-free reads.
  ObjectList unreclaimed_ ABSL_GUARDED_BY(mu_);
  std::atomic<size_t> unreclaimed_count_{0};
  LargeVector<YoungEntry> young_ ABSL_GUARDED_BY(mu_);
  // young_'s first capacity; Allocate doubles it from there.
  static constexpr size_t kMinYoungCapacity = 64;
  std::vector<NodeId> remembered_ ABSL_GUARDED_BY(mu_);
  // allocations() at each of the last kMaxPromoteAfter AgeSurvivors calls,
  // oldest first.
  std::vector<int64_t> collection_serials_ ABSL_GUARDED_BY(mu_);

  EventCounter drops_;
  EventCounter old_drops_;
  // Raised by NoteMaybeDrop; lowered by the collection that reads them.
  std::atomic<bool> maybe_drop_{false};
  std::atomic<bool> maybe_old_drop_{false};
  // Written only by Allocate, with mu_ held exclusively; read without it.
  std::atomic<int64_t> allocations_{0};
  std::atomic<bool> verify_collections_{false};

  // Owner labels: each text once, with how many entries use it; each
  // slot's entries. Handles point at their entry, so copying and dropping
  // one needs only the entry's count. Entries live in `label_entries_`
  // (stable addresses) for the heap's life; removed ones wait in
  // `free_labels_` for reuse (see SlotLabel).
  mutable Mutex labels_mu_;
  absl::node_hash_map<std::string, int64_t> label_texts_
      ABSL_GUARDED_BY(labels_mu_);
  absl::flat_hash_map<uint32_t, absl::InlinedVector<SlotLabel*, 1>> slot_labels_
      ABSL_GUARDED_BY(labels_mu_);
  std::deque<SlotLabel> label_entries_ ABSL_GUARDED_BY(labels_mu_);
  std::vector<SlotLabel*> free_labels_ ABSL_GUARDED_BY(labels_mu_);

  mutable Mutex pins_mu_;
  uint64_t next_pin_ ABSL_GUARDED_BY(pins_mu_) = 1;
  absl::flat_hash_map<uint64_t, std::vector<uint32_t>> pins_
      ABSL_GUARDED_BY(pins_mu_);
};

}  // namespace gc
}  // namespace graphgc

#endif  // GRAPHGC_GC_HEAP_H_
