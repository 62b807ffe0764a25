/* claims.c with main reading the owner of a job the workers may still
 * claim. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define WORKERS 3
#define JOBS 4

static int owner[JOBS];

static void *worker(void *arg)
{
    int me = (int)(long)arg;
    int done = 0;
    for (int job = 0; job < JOBS; job++) {
        int nobody = 0;
        if (__atomic_compare_exchange_n(&owner[job], &nobody, me, 0, /* RACE on owner */
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
            done++;
    }
    printf("worker %d claimed %d jobs\n", me, done);
    return NULL;
}

int main(void)
{
    pthread_t threads[WORKERS];
    owner[0] = 100;
    for (long i = 0; i < WORKERS; i++)
        pthread_create(&threads[i], NULL, worker, (void *)(i + 1));
    printf("job 1 is taken: %d\n", owner[1] != 0); /* RACE on owner */
    for (int i = 0; i < WORKERS; i++)
        pthread_join(threads[i], NULL);
    int claimed = 0;
    for (int job = 0; job < JOBS; job++)
        claimed += owner[job] != 0;
    printf("%d jobs claimed\n", claimed);
    return 0;
}
