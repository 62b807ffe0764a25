/* libc-calls.c with its one-time set-up guarded by a plain flag instead of
 * pthread_once. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 2

static int set_up;
static int table[8];

static int compare(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

static void *job(void *arg)
{
    unsigned seed = (unsigned)(long)arg;
    if (!set_up) { /* RACE on set_up */
        for (int i = 0; i < 8; i++)
            table[i] = 8 - i; /* RACE on table */
        set_up = 1; /* RACE on set_up */
    }
    int mine[8];
    for (int i = 0; i < 8; i++)
        mine[i] = table[i] + rand_r(&seed) % 3; /* RACE on table */
    qsort(mine, 8, sizeof mine[0], compare);
    char message[40];
    snprintf(message, sizeof message, "smallest %d", mine[0]);
    puts(message);
    return NULL;
}

int main(void)
{
    pthread_t threads[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&threads[i], NULL, job, (void *)(i + 7));
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    return 0;
}
