/* old-threads.c with the ticks counted without the lock. */
#include <pthread.h>
#include <stdio.h>

int ticks;

void *worker()
{
    ticks++; /* RACE on ticks */
    printf("worker ticked\n");
    return NULL;
}

void ticker(void *arg)
{
    ticks += *(int *)arg; /* RACE on ticks */
}

int main()
{
    pthread_t a, b;
    int step = 2;
    pthread_create(&a, NULL, worker, NULL);
    pthread_create(&b, NULL, (void *(*)(void *))ticker, &step);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("ticks = %d\n", ticks);
    return 0;
}
