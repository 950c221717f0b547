/*
 * fewrow-reference.c: the losing positions of misère Chomp in a 4 x N box,
 * one entry per prefix (unique extension), in plain single-threaded C, as a
 * yardstick for the few-row engine (`chomp solve --engine few-row`). It
 * shares no code with the engine.
 *
 *   cc -O2 -o /tmp/fewrow-reference scripts/fewrow-reference.c
 *   /usr/bin/time -v /tmp/fewrow-reference 500    # prints losses,positions
 *
 * A position is a prefix (a, b, c), a >= b >= c, and a last row x <= c. At
 * most one x makes it a loss (the bites in the last row reach every smaller
 * x), so L[a][b][c] holds that x, or NONE. Prefixes are decided in
 * lexicographic order, each from all its a + b + c bites in the prefix rows:
 * a bite at (i, j) cuts rows i.. to min(., j), giving the prefix q and the
 * last row min(x, j); it excludes x = L(q) when L(q) < j, and every x >= j
 * when L(q) = j. L(p) is the least x <= c not excluded. The empty board is
 * no position: the prefix (0, 0, 0) has NONE, and (0, 0) is no bite.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NONE 0xffff

static int N;
static uint16_t *L;
static uint64_t *T0, *T1; /* rank(a, b, c) = T0[a] + T1[b] + c */

static inline uint64_t rank3(int a, int b, int c) { return T0[a] + T1[b] + (uint64_t)c; }
static inline int min(int x, int y) { return x < y ? x : y; }

int main(int argc, char **argv) {
    if (argc != 2 || (N = atoi(argv[1])) < 1 || N > 65535) {
        fprintf(stderr, "usage: fewrow-reference N (1..65535: the 4 x N box)\n");
        return 2;
    }
    T0 = malloc((N + 1) * sizeof *T0);
    T1 = malloc((N + 1) * sizeof *T1);
    for (uint64_t v = 0; v <= (uint64_t)N; v++) {
        T0[v] = v * (v + 1) * (v + 2) / 6; /* C(v + 2, 3) */
        T1[v] = v * (v + 1) / 2;           /* C(v + 1, 2) */
    }
    uint64_t prefixes = T0[N] + T1[N] + N + 1;
    L = malloc(prefixes * sizeof *L);
    uint32_t *seen = calloc(N + 2, sizeof *seen); /* seen[x] == stamp: x excluded */
    uint32_t stamp = 0;
    if (!L || !seen) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    uint64_t losses = 0;
    for (int a = 0; a <= N; a++)
        for (int b = 0; b <= a; b++)
            for (int c = 0; c <= b; c++) {
                if (a == 0) {
                    L[rank3(a, b, c)] = NONE; /* the empty board */
                    continue;
                }
                stamp++;
                int cap = c + 1; /* every x >= cap is excluded */
                for (int j = 1; j < a; j++) { /* row 0 */
                    int q = L[rank3(j, min(b, j), min(c, j))];
                    if (q == NONE) continue;
                    if (q == j) { if (j < cap) cap = j; }
                    else seen[q] = stamp;
                }
                for (int j = 0; j < b; j++) { /* row 1 */
                    int q = L[rank3(a, j, min(c, j))];
                    if (q == NONE) continue;
                    if (q == j) { if (j < cap) cap = j; }
                    else seen[q] = stamp;
                }
                for (int j = 0; j < c; j++) { /* row 2 */
                    int q = L[rank3(a, b, j)];
                    if (q == NONE) continue;
                    if (q == j) { if (j < cap) cap = j; }
                    else seen[q] = stamp;
                }
                int x = 0;
                while (x < cap && seen[x] == stamp) x++;
                L[rank3(a, b, c)] = x < cap ? (uint16_t)x : NONE;
                if (x < cap) losses++;
            }
    /* Positions of the box other than the empty board: C(N + 4, 4) - 1. */
    uint64_t n = N;
    uint64_t positions = (n + 4) * (n + 3) / 2 * (n + 2) / 3 * (n + 1) / 4 - 1;
    printf("%llu,%llu\n", (unsigned long long)losses, (unsigned long long)positions);
    return 0;
}
