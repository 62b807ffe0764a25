/* printing.c with the total updated outside its lock. */
#include <pthread.h>
#include <stdio.h>

#define WORKERS 3

static long total;

static void *work(void *arg)
{
    long id = (long)arg;
    printf("worker %ld starting\n", id);
    long sum = 0;
    for (long i = 1; i <= 10; i++)
        sum += i * id;
    total += sum; /* RACE on total */
    puts("worker done");
    return NULL;
}

int main(void)
{
    pthread_t threads[WORKERS];
    for (long i = 0; i < WORKERS; i++)
        pthread_create(&threads[i], NULL, work, (void *)(i + 1));
    for (int i = 0; i < WORKERS; i++)
        pthread_join(threads[i], NULL);
    printf("total = %ld\n", total);
    return 0;
}
