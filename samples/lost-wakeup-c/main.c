/* The main thread waits for the worker's "done" signal but never checks
 * the flag: a signal sent before the wait is lost and main waits forever. */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_signal = PTHREAD_COND_INITIALIZER;
static int done;
static long result;

static void *worker(void *arg) {
    (void)arg;
    long sum = 0;
    for (int i = 1; i <= 100; i++)
        sum += i;
    pthread_mutex_lock(&lock);
    result = sum;
    done = 1;
    pthread_cond_signal(&done_signal);
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_mutex_lock(&lock);
    /* BUG: should be `while (!done) pthread_cond_wait(...)`. */
    pthread_cond_wait(&done_signal, &lock);
    pthread_mutex_unlock(&lock);
    pthread_join(t, NULL);
    printf("result = %ld\n", result);
    return 0;
}
