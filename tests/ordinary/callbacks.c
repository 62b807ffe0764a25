/* Callbacks as old C stores them: a job queue keeps `void (*)(void *)`,
 * and is given `void f()` (no parameters) and a function that returns a
 * value nobody reads, cast to that type; worker threads call each job
 * with an argument, as a thread pool does. Native code runs this; wasm
 * checks a call through a pointer against the callee's type. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

typedef void (*job_fn)(void *);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int counted, summed;
static job_fn jobs[4];
static void *args[4];
static int next_job;

void count() {
    pthread_mutex_lock(&lock);
    counted++;
    pthread_mutex_unlock(&lock);
}

int add(void *arg) {
    pthread_mutex_lock(&lock);
    int sum = summed += *(int *)arg;
    pthread_mutex_unlock(&lock);
    return sum;
}

static void *worker(void *unused) {
    (void)unused;
    for (;;) {
        pthread_mutex_lock(&lock);
        int mine = next_job < 4 ? next_job++ : -1;
        pthread_mutex_unlock(&lock);
        if (mine < 0)
            return NULL;
        jobs[mine](args[mine]);
    }
}

int main(void) {
    static int three = 3, four = 4;
    jobs[0] = (job_fn)count;
    jobs[1] = (job_fn)add;
    args[1] = &three;
    jobs[2] = (job_fn)count;
    jobs[3] = (job_fn)add;
    args[3] = &four;
    pthread_t a, b;
    pthread_create(&a, NULL, worker, NULL);
    pthread_create(&b, NULL, worker, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert(counted == 2 && summed == 7);
    printf("%d jobs\n", counted + 2);
    return 0;
}
