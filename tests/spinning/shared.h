/* What the spinning programs share: N threads (2 unless -DN=...), each
 * running `worker(id)`; a critical section that must hold one thread at a
 * time; and the shared variables, plain (`volatile`, so that an optimised
 * build reads them again in each turn of a loop, as the algorithms
 * assume: explored with `--points memory`, every access a scheduling
 * point) or, with -DATOMICS, C11 sequentially consistent atomics.
 * -DBROKEN selects each program's broken variant. */
#include <assert.h>
#include <pthread.h>

#ifndef N
#define N 2
#endif

#ifdef ATOMICS
#include <stdatomic.h>
typedef atomic_int shared_int;
#define LOAD(x) atomic_load(&(x))
#define STORE(x, v) atomic_store(&(x), (v))
/* What the critical section guards is ordinary data, ordered by the
 * algorithm's atomics (or racing when the algorithm is broken). */
typedef int guarded_int;
#else
typedef volatile int shared_int;
#define LOAD(x) (x)
#define STORE(x, v) ((x) = (v))
/* Every shared variable is plain and volatile, as the algorithms were
 * written for memory that is sequentially consistent. */
typedef volatile int guarded_int;
#endif

static guarded_int inside, entered;

/* The critical section: no other thread may be in it. */
static void critical_section(void) {
    inside++;
    assert(inside == 1);
    entered++;
    inside--;
}

static void *worker(void *arg);

/* Runs the N workers, then checks that each entered once. */
int main(void) {
    pthread_t threads[N];
    for (long i = 0; i < N; i++)
        pthread_create(&threads[i], 0, worker, (void *)i);
    for (int i = 0; i < N; i++)
        pthread_join(threads[i], 0);
    assert(entered == N);
    return 0;
}
