/* The two-phase search loops of ida.py, compiled: one view, phase-1 sequences of one length.
 *
 * Same tables, same move order, same pruning as ViewSearch in ida.py, so a search that the clock does
 * not cut returns the same solutions; native.py compiles this file with the system C compiler and calls
 * phase1_at through ctypes. Each solution found goes to the offer callback, which answers the most
 * moves a solution still worth finding may have, or -1 to stop.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <string.h>
#include <time.h>

#define NO_FACE 6
#define SLICES 495
#define FLIPS 2048
#define SLICE_PERMS 24
#define UD_SPLITS 70
#define RETURN_TO_G1 5
#define PHASE2_DEPTH_LIMIT 12
#define MAX_PHASE1 40
#define CLOCK_EVERY 64

typedef int (*offer_fn)(const int8_t *moves, int count);

typedef struct {
    const int32_t *twist, *flip, *slice;                              /* coordinate * 18 + move */
    const uint8_t *twist_slice, *flip_slice, *twist_flip;             /* pruning distances */
    const int32_t *corner, *edge, *slice_perm, *ud_split;             /* coordinate * 10 + k */
    const uint8_t *corner_slice_perm, *edge_slice_perm, *corner_ud_split;
    const int32_t *ud_split_of_edge;
    const int8_t *move_cp, *move_ep;                                  /* move * 8 + slot, move * 12 + slot */
    const int8_t *phase2_moves;                                       /* k -> move */
    const uint8_t *allowed;                                           /* previous face * 18 + move */
    const uint8_t *ends_phase1;                                       /* move -> may end phase 1 */
} Tables;

typedef struct {
    const Tables *t;
    offer_fn offer;
    double deadline;
    int bound;
    int depth;
    unsigned ticks;
    int8_t path[MAX_PHASE1 + PHASE2_DEPTH_LIMIT];
    int8_t cp[MAX_PHASE1 + 1][8];
    int8_t ep[MAX_PHASE1 + 1][12];
} Search;

static int out_of_time(Search *s) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec > s->deadline;
}

static int clock_due(Search *s) { return (++s->ticks % CLOCK_EVERY) == 0 && out_of_time(s); }

/* Lexicographic rank of a permutation of 0..n-1 (Lehmer code), as coords.permutation_index. */
static int rank(const int8_t *p, int n) {
    int r = 0;
    for (int i = 0; i < n; i++) {
        int smaller = 0;
        for (int j = i + 1; j < n; j++) smaller += p[j] < p[i];
        r = r * (n - i) + smaller;
    }
    return r;
}

static int max3(int a, int b, int c) { return a > b ? (a > c ? a : c) : (b > c ? b : c); }

/* 1: solved in exactly togo moves (their k in path[at..]); 0: not; -1: out of time. */
static int phase2(Search *s, int c, int e, int p, int u, int togo, int previous, int at) {
    if (togo == 0) return c == 0 && e == 0 && p == 0;
    if (togo >= 8 && out_of_time(s)) return -1;
    const Tables *t = s->t;
    int rest = togo - 1;
    for (int k = 0; k < 10; k++) {
        int move = t->phase2_moves[k];
        if (!t->allowed[previous * 18 + move]) continue;
        int p2 = t->slice_perm[p * 10 + k], c2 = t->corner[c * 10 + k];
        if (t->corner_slice_perm[c2 * SLICE_PERMS + p2] > rest) continue;
        int u2 = t->ud_split[u * 10 + k];
        if (t->corner_ud_split[c2 * UD_SPLITS + u2] > rest) continue;
        int e2 = t->edge[e * 10 + k];
        if (t->edge_slice_perm[e2 * SLICE_PERMS + p2] > rest) continue;
        s->path[at] = (int8_t)move;
        int found = phase2(s, c2, e2, p2, u2, rest, move / 3, at + 1);
        if (found) return found;
    }
    return 0;
}

/* Phase 2 from the end of the current phase-1 sequence: 0 to go on, -1 to stop. */
static int phase2_from_endpoint(Search *s) {
    const Tables *t = s->t;
    if (out_of_time(s)) return -1;
    int length1 = s->depth;
    int limit = s->bound - length1 < PHASE2_DEPTH_LIMIT ? s->bound - length1 : PHASE2_DEPTH_LIMIT;
    if (limit < 0) return 0;
    const int8_t *cp = s->cp[length1], *ep = s->ep[length1];
    int8_t slice_edges[4];
    for (int i = 0; i < 4; i++) slice_edges[i] = (int8_t)(ep[8 + i] - 8);
    int corner = rank(cp, 8), edge = rank(ep, 8), slice_perm = rank(slice_edges, 4);
    int split = t->ud_split_of_edge[edge];
    int h = max3(t->corner_slice_perm[corner * SLICE_PERMS + slice_perm],
                 t->edge_slice_perm[edge * SLICE_PERMS + slice_perm],
                 t->corner_ud_split[corner * UD_SPLITS + split]);
    int previous = length1 ? s->path[length1 - 1] / 3 : NO_FACE;
    for (int depth = h; depth <= limit; depth++) {
        int found = phase2(s, corner, edge, slice_perm, split, depth, previous, length1);
        if (found < 0) return -1;
        if (found) {
            int bound = s->offer(s->path, length1 + depth);
            if (bound < 0) return -1;
            s->bound = bound;
            return 0;
        }
    }
    return 0;
}

static int phase1(Search *s, int twist, int flip, int slice, int togo, int previous, int at) {
    if (togo == 0) return phase2_from_endpoint(s);
    if (togo >= 3 && clock_due(s)) return -1;
    const Tables *t = s->t;
    int rest = togo - 1;
    for (int move = 0; move < 18; move++) {
        if (!t->allowed[previous * 18 + move] || (togo == 1 && !t->ends_phase1[move])) continue;
        int sl = t->slice[slice * 18 + move], tw = t->twist[twist * 18 + move];
        int twist_slice = t->twist_slice[tw * SLICES + sl];
        if (twist_slice > rest) continue;
        int fl = t->flip[flip * 18 + move];
        int flip_slice = t->flip_slice[fl * SLICES + sl];
        if (flip_slice > rest || t->twist_flip[tw * FLIPS + fl] > rest) continue;
        if (twist_slice == 0 && flip_slice == 0 && rest > 0 && rest < RETURN_TO_G1) continue;
        s->path[at] = (int8_t)move;
        for (int i = 0; i < 8; i++) s->cp[at + 1][i] = s->cp[at][t->move_cp[move * 8 + i]];
        for (int i = 0; i < 12; i++) s->ep[at + 1][i] = s->ep[at][t->move_ep[move * 12 + i]];
        if (phase1(s, tw, fl, sl, rest, move / 3, at + 1) < 0) return -1;
    }
    return 0;
}

/* Every phase-1 sequence of exactly depth moves from (twist, flip, slice) with permutations cp, ep,
 * each followed by phase 2. Returns 0 when done, -1 when stopped (clock or offer), -2 for a bad depth. */
int phase1_at(const Tables *t, int twist, int flip, int slice, const int8_t *cp, const int8_t *ep, int depth,
              double deadline, int bound, offer_fn offer) {
    if (depth < 0 || depth > MAX_PHASE1) return -2;
    Search s;
    s.t = t;
    s.offer = offer;
    s.deadline = deadline;
    s.bound = bound;
    s.depth = depth;
    s.ticks = 0;
    memcpy(s.cp[0], cp, 8);
    memcpy(s.ep[0], ep, 12);
    return phase1(&s, twist, flip, slice, depth, NO_FACE, 0);
}
