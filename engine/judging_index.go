package engine

// Derived data of the judging flow: a dense view of the projects for the assignment
// algorithm, who is looking at what, and the sparse pair-comparison counts. None of it is
// in the snapshot; it is rebuilt from the state after a restore and whenever a command
// that the judging code does not maintain it for has run.
//
// Rule: nothing here may decide the order of anything written to the state (log lines,
// flags, events). Candidate lists are in table order and ties are broken with the
// command's random stream, so the results depend on the state alone.

func init() {
	reindexHooks = append(reindexHooks, func(s *State) { s.jx = newJudgingData(&s.RatingInputs) })
}

// judgingData is the derived data of the judging flow.
type judgingData struct {
	// Assignment index, valid while syncedAt == State.Applied (commands of the judging
	// flow keep it up to date; any other command makes it rebuild on the next use).
	valid    bool
	syncedAt uint64
	slots    []slot     // active and hidden projects in table order
	proj     []*Project // per slot
	nums     []int32    // per slot: stable project number
	holders  [][]holder // per slot: judges whose current project this is
	slotOf   map[ID]int32
	// levelCount counts the active projects by views (seen); prioCount the active
	// prioritized ones. They let the assignment find the least-viewed level at once.
	levelCount []int32
	lvFree     [][]int32 // per views level: the active slots nobody holds
	lvHeld     [][]int32 // per views level: the active slots someone holds
	inLevel    []int32   // per slot: its position in its level list
	holdQ      []holdRec // holds in time order (released ones dropped lazily)
	holdHead   int
	nHolds     int // current assignments (entries of holders)
	holdSorted bool
	prioCount  int
	noFast     bool    // tests: always use the full scan
	bigLevel   int     // fast path: levels bigger than this are walked (see assign.go)
	maxWalk    int     // fast path: longest walk
	fastHits   uint64  // assignments decided by the fast path (diagnostics)
	slotByNum  []int32 // stable project number -> slot (-1 = none)
	// seenSlots caches, per judge, the slots of its seen projects (see seenOf);
	// emptied whenever the index is rebuilt.
	seenSlots map[ID]*seenSlots
	epoch     uint32
	mark      []uint32 // per slot: == epoch when excluded for the current judge
	// pickSeen is the seen bitset (seenSlots.bits) of the judge being assigned, during
	// pickNext: a slot whose bit is set is excluded as if marked (see excluded).
	pickSeen []uint64
	// peek is set while upcomingFor runs the assignment again: peekOut are slots out of
	// reach (the current project and those listed), and no judge changes group.
	peek       bool
	peekOut    []int32
	sumMark    []uint32  // per slot: == epoch when sum holds a value
	sum        []int32   // per slot: pair-comparison sum for the current judge
	acc        []int32   // per project number: pairSums' scratch for dense rows
	focus      []float64 // per slot: focus need (focus.go)
	focusOrder []int32   // slots by focus need, highest first
	focusGoal  string    // assignment_goal the needs were computed for
	focusRule  int       // and State.FocusNeed
	focusRun   []int32   // per position in focusOrder: end of its run of equal needs
	cands      []int32
	free       []int32
	ties       []int32
	ties2      []int32

	// Pair-comparison counts: for each stable project number, the projects seen by the
	// same judges and how many judges saw both. counted holds, per judge, the project
	// numbers that the counts include, so that a judge or project can be taken out again.
	numOf      map[ID]int32
	nbrs       []pairRow
	counted    map[ID][]int32
	pairsDirty bool

	scores scoreCache
}

// slot is one project as the assignment algorithm sees it: the fields every assignment
// scans, kept small so that 10,000 of them stay in cache. The project itself, its pair
// number and its holders are in parallel slices of judgingData.
type slot struct {
	seen  int32
	loc   int32
	group int32
	flags uint8
}

// Slot flags.
const (
	slotActive uint8 = 1 << iota
	slotPrio
	slotHeld // someone holds it (see judgingData.holders)
)

func (sl *slot) has(f uint8) bool { return sl.flags&f != 0 }

// holder is a judge currently assigned to a project.
type holder struct {
	judge ID
	since int64
	track string // "" for a general judge
}

type pairCount struct{ other, n int32 }

// holdRec is one assignment in the hold queue.
type holdRec struct {
	since int64
	judge ID
	slot  int32
}

func newJudgingData(inputs *uint64) *judgingData {
	x := &judgingData{
		slotOf:     map[ID]int32{},
		numOf:      map[ID]int32{},
		counted:    map[ID][]int32{},
		pairsDirty: true,
		bigLevel:   defaultBigLevel,
		maxWalk:    defaultMaxWalk,
	}
	x.scores.init(inputs)
	return x
}

// jd returns the judging data (created by reindex; NewState and Restore call it).
func (s *State) jd() *judgingData {
	if s.jx == nil {
		s.jx = newJudgingData(&s.RatingInputs)
	}
	return s.jx
}

// keep records that a successful judging command left the index consistent with the
// state it produced (call it on every successful return of a judging command).
func (x *judgingData) keep(s *State) {
	if x.valid && x.syncedAt == s.Applied {
		x.syncedAt = s.Applied + 1
	}
}

// sync rebuilds the assignment index unless it is current.
func (x *judgingData) sync(s *State) {
	if x.valid && x.syncedAt == s.Applied {
		return
	}
	ps := s.ProjectsByLocation()
	x.slots = make([]slot, len(ps))
	x.levelCount = x.levelCount[:0]
	x.lvFree, x.lvHeld = x.lvFree[:0], x.lvHeld[:0]
	x.inLevel = make([]int32, len(ps))
	x.holdQ, x.holdHead, x.holdSorted, x.nHolds = x.holdQ[:0], 0, true, 0
	x.prioCount = 0
	x.proj = ps
	x.nums = make([]int32, len(ps))
	x.holders = make([][]holder, len(ps))
	x.slotOf = make(map[ID]int32, len(ps))
	for i, p := range ps {
		x.nums[i] = x.numFor(p.ID)
		x.setSlot(int32(i), p)
		x.slotOf[p.ID] = int32(i)
	}
	x.slotByNum = make([]int32, len(x.nbrs))
	for i := range x.slotByNum {
		x.slotByNum[i] = -1
	}
	for i, n := range x.nums {
		x.slotByNum[n] = int32(i)
	}
	for _, id := range s.JudgeOrder {
		j, ok := s.Judges[id]
		if !ok || j.Current.IsZero() {
			continue
		}
		x.hold(s, j.Current, j)
	}
	x.seenSlots = map[ID]*seenSlots{}
	x.mark = make([]uint32, len(ps))
	x.sumMark = make([]uint32, len(ps))
	x.sum = make([]int32, len(ps))
	x.epoch = 0
	x.focusGoal, x.focusRule = s.Options.AssignmentGoal, s.FocusNeed
	x.refreshFocus()
	x.valid = true
	x.syncedAt = s.Applied
}

// current reports whether the index matches the state (sync would change nothing).
func (x *judgingData) current(s *State) bool { return x.valid && x.syncedAt == s.Applied }

// syncLive is sync for a command that reads the index only when it is current, except
// during a replay while the index has never been built since the restore (docs/behaviour.md#recovery-at-memory-speed):
// then the index stays empty, the command's upkeep (refresh, hold, release) finds no
// slot, and the first command that needs the index (a live one, or a replayed
// assignment) builds it once from the state, as after a restore.
func (x *judgingData) syncLive(s *State, c *Ctx) {
	if !c.quiet || x.valid {
		x.sync(s)
	}
}

// judged reports whether j finished project p: from the index when it is current,
// else from j's seen list.
func (x *judgingData) judged(s *State, j *Judge, p ID) bool {
	if x.current(s) {
		if k, ok := x.slotOf[p]; ok {
			return x.hasSeen(j, k)
		}
	}
	return j.seenIndex(p) >= 0
}

// busySkips returns how many of j's skips are busy ones (from the index's cache when it
// is current).
func (x *judgingData) busySkips(s *State, j *Judge) int {
	if len(j.Skipped) == 0 {
		return 0
	}
	if x.current(s) {
		_, n := x.skipSlotsOf(j)
		return n
	}
	n := 0
	for _, busy := range j.Skipped {
		if busy {
			n++
		}
	}
	return n
}

// trackOf returns the track a judge judges for ("" for a general judge).
func (s *State) trackOf(j *Judge) string {
	if s.IsGeneral(j) {
		return ""
	}
	return j.Track
}

// newEpoch returns a fresh mark value. Marks are valid while their epoch is the one in
// use, so nothing needs clearing between assignments; before the counter could wrap,
// beginPick clears the marks (an assignment takes at most two epochs).
func (x *judgingData) newEpoch() uint32 {
	x.epoch++
	return x.epoch
}

// excluded reports whether slot k is out for the judge being assigned (epoch ep): one
// of its seen projects (pickSeen) or marked (its skipped ones).
func (x *judgingData) excluded(k int32, ep uint32) bool {
	return x.mark[k] == ep || bitSet(x.pickSeen, k)
}

// beginPick prepares the marks for one assignment.
func (x *judgingData) beginPick() {
	if x.epoch >= 1<<32-4 {
		for i := range x.mark {
			x.mark[i], x.sumMark[i] = 0, 0
		}
		x.epoch = 0
	}
}

// setSlot copies a project's fields into slot k.
func (x *judgingData) setSlot(k int32, p *Project) {
	sl := &x.slots[k]
	if sl.has(slotActive) {
		x.leaveLevel(k)
		if sl.has(slotPrio) {
			x.prioCount--
		}
	}
	sl.seen, sl.loc, sl.group = int32(p.Seen), int32(p.Location), int32(p.Group)
	sl.flags &= slotHeld
	if p.Prioritized {
		sl.flags |= slotPrio
	}
	if p.Active {
		sl.flags |= slotActive
		x.enterLevel(k)
		if p.Prioritized {
			x.prioCount++
		}
	}
}

// enterLevel adds active slot k to its level's free or held list.
func (x *judgingData) enterLevel(k int32) {
	sl := &x.slots[k]
	if sl.seen < 0 {
		return
	}
	for int(sl.seen) >= len(x.levelCount) {
		x.levelCount = append(x.levelCount, 0)
		x.lvFree = append(x.lvFree, nil)
		x.lvHeld = append(x.lvHeld, nil)
	}
	x.levelCount[sl.seen]++
	lists := x.lvFree
	if sl.has(slotHeld) {
		lists = x.lvHeld
	}
	x.inLevel[k] = int32(len(lists[sl.seen]))
	lists[sl.seen] = append(lists[sl.seen], k)
}

// leaveLevel removes active slot k from its level's list.
func (x *judgingData) leaveLevel(k int32) {
	sl := &x.slots[k]
	if sl.seen < 0 {
		return
	}
	x.levelCount[sl.seen]--
	lists := x.lvFree
	if sl.has(slotHeld) {
		lists = x.lvHeld
	}
	list := lists[sl.seen]
	i := x.inLevel[k]
	last := list[len(list)-1]
	list[i] = last
	x.inLevel[last] = i
	lists[sl.seen] = list[:len(list)-1]
}

// setHeld sets or clears slot k's held flag, moving it between its level's lists.
func (x *judgingData) setHeld(k int32, held bool) {
	sl := &x.slots[k]
	if sl.has(slotHeld) == held {
		return
	}
	active := sl.has(slotActive)
	if active {
		x.leaveLevel(k)
	}
	if held {
		sl.flags |= slotHeld
	} else {
		sl.flags &^= slotHeld
	}
	if active {
		x.enterLevel(k)
	}
}

// refresh copies a project's fields into its slot after a judging command changed it.
func (x *judgingData) refresh(p *Project) {
	if k, ok := x.slotOf[p.ID]; ok {
		x.setSlot(k, p)
	}
}

// numFor returns the stable number of a project for the pair counts.
func (x *judgingData) numFor(id ID) int32 {
	if n, ok := x.numOf[id]; ok {
		return n
	}
	n := int32(len(x.nbrs))
	x.numOf[id] = n
	x.nbrs = append(x.nbrs, pairRow{})
	if x.slotByNum != nil {
		x.slotByNum = append(x.slotByNum, -1)
	}
	return n
}

// bump adds d to the count of the pair (a, b) in a's row.
func (x *judgingData) bump(a, b, d int32) {
	x.nbrs[a].add(b, d, len(x.nbrs))
}

// addSeen counts judge's new view of project n against the judge's earlier views.
func (x *judgingData) addSeen(judge ID, n int32) {
	for _, o := range x.counted[judge] {
		if o != n {
			x.bump(n, o, 1)
			x.bump(o, n, 1)
		}
	}
	x.counted[judge] = append(x.counted[judge], n)
}

func (x *judgingData) applyList(list []int32, d int32) {
	for a := 0; a < len(list); a++ {
		for b := a + 1; b < len(list); b++ {
			if list[a] != list[b] {
				x.bump(list[a], list[b], d)
				x.bump(list[b], list[a], d)
			}
		}
	}
}

// reconcilePairs brings the pair counts in line with every judge's seen list after a
// change the judging flow did not make itself (deletions, resets, restore).
func (x *judgingData) reconcilePairs(s *State) {
	if !x.pairsDirty {
		return
	}
	live := make(map[ID]bool, len(s.Judges))
	for _, id := range s.JudgeOrder {
		j, ok := s.Judges[id]
		if !ok {
			continue
		}
		live[id] = true
		cur := make([]int32, 0, len(j.SeenProjects))
		for _, sp := range j.SeenProjects {
			if _, ok := s.Projects[sp.ProjectID]; ok {
				cur = append(cur, x.numFor(sp.ProjectID))
			}
		}
		old := x.counted[id]
		if equalNums(old, cur) {
			continue
		}
		x.applyList(old, -1)
		x.applyList(cur, 1)
		x.counted[id] = cur
	}
	for id, old := range x.counted {
		if !live[id] {
			x.applyList(old, -1)
			delete(x.counted, id)
		}
	}
	x.pairsDirty = false
}

func equalNums(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
