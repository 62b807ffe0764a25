/* Workers that report their progress with printf, puts and fputs, and a
 * total kept under a mutex. */
#include <pthread.h>
#include <stdio.h>

#define WORKERS 3

static pthread_mutex_t total_lock = PTHREAD_MUTEX_INITIALIZER;
static long total;

static void *work(void *arg)
{
    long id = (long)arg;
    printf("worker %ld starting\n", id);
    long sum = 0;
    for (long i = 1; i <= 10; i++)
        sum += i * id;
    pthread_mutex_lock(&total_lock);
    total += sum;
    pthread_mutex_unlock(&total_lock);
    puts("worker done");
    fputs("worker leaving\n", stdout);
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
    return total == 330 ? 0 : 1;
}
