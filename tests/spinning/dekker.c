/* Dekker's algorithm, for the two threads it is written for. A thread
 * that wants to enter raises its flag; while the other's is up, the one
 * whose turn it is not lowers its flag and waits for its turn. Broken: a
 * thread waits for the other's flag to fall before raising its own, so
 * both may see the other's down and enter. */
#include "shared.h"

#if N != 2
#error "Dekker's algorithm is for two threads"
#endif

static shared_int wants[2];
static shared_int turn;

static void *worker(void *arg) {
    int me = (int)(long)arg, other = 1 - me;
#ifdef BROKEN
    while (LOAD(wants[other])) {
    }
    STORE(wants[me], 1);
#else
    STORE(wants[me], 1);
    while (LOAD(wants[other])) {
        if (LOAD(turn) != me) {
            STORE(wants[me], 0);
            while (LOAD(turn) != me) {
            }
            STORE(wants[me], 1);
        }
    }
#endif
    critical_section();
    STORE(turn, other);
    STORE(wants[me], 0);
    return 0;
}
