/*
 * reference-sieve.c: the losing positions of misère Chomp by tile count, in
 * plain C from the definition, as a yardstick for `chomp bench` (the
 * engine's losses to 100 tiles are measured against this sieve's time on the
 * same machine, same number of threads). It shares no code with the engine.
 *
 *   cc -O2 -march=native -fopenmp -o /tmp/reference-sieve scripts/reference-sieve.c
 *   /usr/bin/time -v /tmp/reference-sieve 100 2    # N tiles, T threads (default 1);
 *                                                  # prints tiles,positions,losses
 *
 * With T threads the losses of a level are pushed in parallel (OpenMP,
 * dynamic schedule), every thread with its own ring of prefetched marks;
 * the marks are atomic ORs (plain ORs with one thread). Without -fopenmp it
 * runs on one thread whatever T says.
 *
 * Positions of n tiles are partitions of n (rows, top row first, never
 * longer than the row above), ranked lexicographically with shorter rows
 * first: rank(λ) = Σ_i Q(suf_i, λ_i − 1), where Q(s, m) counts partitions of
 * s into parts at most m and suf_i = λ_i + λ_{i+1} + … . One bit per position
 * of every level up to N (no conjugate halving): a set bit is a win (it has
 * a losing child). Levels are decided in order: the clear bits of level n
 * are its losses; each loss then sets the bit of every parent (a position
 * one bite away from it) at every level up to N. A bite (a, b) of P (b ≥ 1,
 * or a ≥ 1) removes the cells of rows ≥ a and columns ≥ b; the child C it
 * leaves has C_a = b < C_{a−1}, so the parents of C come from its corners:
 * for each run of equal rows C_a = … = C_{a+r−1} = b (rows above longer,
 * below shorter), every P that lengthens those r rows to P_a > b, P_i ≥ b,
 * non-increasing and at most C_{a−1}; and (b = 0) every P that adds rows
 * below the last, at most as long as it: for each level, one contiguous
 * rank range, set as a range.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define MAXN 200

static int N;
static uint64_t Q[MAXN + 1][MAXN + 1]; /* Q[s][m]: partitions of s, parts <= m */
static uint64_t *bits[MAXN + 1];       /* level n: a bit per rank, set = win */

static int threads = 1;

/* Other threads may OR into the same word: atomic ORs with several threads. */
static inline void or_word(uint64_t *w, uint64_t m) {
    if (threads > 1) __atomic_fetch_or(w, m, __ATOMIC_RELAXED); else *w |= m;
}

static inline void mark(int n, uint64_t r) { or_word(&bits[n][r >> 6], 1ull << (r & 63)); }

/* The single marks go through a ring: each word is prefetched when queued
 * and ORed RING marks later, so that the (random) cache misses overlap. Every
 * mark lands in a level above the one being scanned; the ring is emptied when
 * a level ends. (Without it this sieve took 34-35 s to 100 tiles against 28 s.) */
#define RING 16
static uint64_t spare;
static _Thread_local uint64_t *ring_word[RING];
static _Thread_local uint64_t ring_mask[RING];
static _Thread_local unsigned ring_at;

static inline void queue_mark(int n, uint64_t r) {
    uint64_t *w = &bits[n][r >> 6];
    unsigned p = ring_at++ % RING;
    __builtin_prefetch(w, 1, 3);
    or_word(ring_word[p], ring_mask[p]);
    ring_word[p] = w;
    ring_mask[p] = 1ull << (r & 63);
}

static void flush_marks(void) {
    for (int p = 0; p < RING; p++) {
        if (ring_word[p]) or_word(ring_word[p], ring_mask[p]);
        ring_word[p] = &spare;
        ring_mask[p] = 0;
    }
}

static void mark_range(int n, uint64_t lo, uint64_t hi) { /* [lo, hi) */
    uint64_t *w = bits[n];
    while (lo < hi && (lo & 63)) mark(n, lo++);
    while (lo + 64 <= hi) { or_word(&w[lo >> 6], ~0ull); lo += 64; }
    while (lo < hi) mark(n, lo++);
}

/* The loss being pushed (each thread its own): its rows, suffixes, level. */
static _Thread_local int c[MAXN + 1], suf[MAXN + 2], k, level;
/* head[a][d]: rank contribution of rows 0..a of a parent with d more tiles. */
static _Thread_local uint64_t head[MAXN + 1][MAXN + 1];
static _Thread_local int P[MAXN + 1];

/* Rows a..i of the run are still to choose (bottom-up); rows below are fixed
 * with `s` tiles from row i + 1 on, `mid` their rank contribution within the
 * run, `added` tiles beyond the loss's. */
static void grow(int a, int i, int b, int cap, int s, uint64_t mid, uint64_t tail, int added) {
    int budget = N - level - added;
    int lo = i == a ? b + 1 : b; /* the corner's own row must grow */
    int below = P[i + 1];
    if (lo < below) lo = below;
    for (int v = lo; v <= cap; v++) {
        /* rows a..i each at least v: the added tiles at least (i − a + 1)(v − b) */
        if ((uint64_t)(i - a + 1) * (v - b) > (uint64_t)budget) break;
        P[i] = v;
        uint64_t m = mid + Q[s + v][v - 1];
        if (i == a) {
            int d = added + v - b;
            queue_mark(level + d, head[a][d] + m + tail);
        } else {
            grow(a, i - 1, b, cap, s + v, m, tail, added + v - b);
        }
    }
}

static void push(void) {
    int most = N - level;
    suf[k] = 0;
    for (int i = k - 1; i >= 0; i--) suf[i] = suf[i + 1] + c[i];
    for (int d = 0; d <= most; d++) head[0][d] = 0;
    for (int a = 0; a < k; a++)
        for (int d = 0; d <= most; d++) head[a + 1][d] = head[a][d] + Q[suf[a] + d][c[a] - 1];
    uint64_t own = head[k][0];
    /* b = 0: rows added below the last, at most as long as it. */
    for (int d = 1; d <= most; d++) mark_range(level + d, head[k][d], head[k][d] + Q[d][c[k - 1]]);
    /* Runs of equal rows a..a+r−1 of length b. */
    for (int a = 0; a < k;) {
        int e = a;
        while (e < k && c[e] == c[a]) e++;
        int b = c[a];
        int cap = a == 0 ? b + most : c[a - 1];
        uint64_t tail = own - head[e][0];
        P[e] = b; /* the row below the run bounds nothing: at least b anyway */
        grow(a, e - 1, b, cap, suf[e], 0, tail, 0);
        a = e;
    }
}

/* The rows of rank r at level n. */
static int unrank(int n, uint64_t r, int *rows) {
    int s = n, m = n, i = 0;
    while (s > 0) {
        int hi = m < s ? m : s, lo = 1;
        /* the v with Q[s][v − 1] <= r < Q[s][v] */
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (Q[s][mid] > r) hi = mid; else lo = mid + 1;
        }
        r -= Q[s][lo - 1];
        rows[i++] = lo;
        s -= lo;
        m = lo;
    }
    return i;
}

int main(int argc, char **argv) {
    N = argc > 1 ? atoi(argv[1]) : 80;
    threads = argc > 2 ? atoi(argv[2]) : 1;
    if (N < 1 || N > MAXN || threads < 1) { fprintf(stderr, "usage: reference-sieve N [THREADS] (N in 1..%d)\n", MAXN); return 2; }
#ifdef _OPENMP
    omp_set_num_threads(threads);
#else
    threads = 1;
#endif
    for (int m = 0; m <= N; m++) Q[0][m] = 1;
    for (int s = 1; s <= N; s++) {
        Q[s][0] = 0;
        for (int m = 1; m <= N; m++) Q[s][m] = Q[s][m - 1] + (s >= m ? Q[s - m][m] : 0);
    }
    for (int n = 1; n <= N; n++) {
        bits[n] = calloc((Q[n][n] + 63) / 64 + 1, 8);
        if (!bits[n]) { fprintf(stderr, "out of memory at level %d\n", n); return 1; }
    }
    uint64_t *loss = NULL, cap = 0;
    printf("tiles,positions,losses\n");
    for (int n = 1; n <= N; n++) {
        uint64_t size = Q[n][n], losses = 0;
        /* The clear bits of level n are its losses (every mark into it is made). */
        for (uint64_t w = 0; w * 64 < size; w++) {
            uint64_t clear = ~bits[n][w];
            if ((w + 1) * 64 > size) clear &= (1ull << (size - w * 64)) - 1;
            while (clear) {
                if (losses == cap) {
                    cap = cap ? 2 * cap : 1 << 16;
                    loss = realloc(loss, cap * sizeof *loss);
                    if (!loss) { fprintf(stderr, "out of memory at level %d\n", n); return 1; }
                }
                loss[losses++] = w * 64 + __builtin_ctzll(clear);
                clear &= clear - 1;
            }
        }
        /* Each loss marks its parents in the levels above. */
        if (n < N) {
#pragma omp parallel
            {
                for (int p = 0; p < RING; p++) ring_word[p] = &spare, ring_mask[p] = 0;
                level = n;
#pragma omp for schedule(dynamic, 64)
                for (uint64_t i = 0; i < losses; i++) {
                    k = unrank(n, loss[i], c);
                    push();
                }
                flush_marks();
            }
        }
        printf("%d,%llu,%llu\n", n, (unsigned long long)size, (unsigned long long)losses);
        fflush(stdout);
        free(bits[n]);
        bits[n] = NULL;
    }
    free(loss);
    return 0;
}
