/* Cargill's bounded buffer: one mutex, ONE condition variable, and
 * pthread_cond_signal. A consumer's signal can wake the other consumer
 * instead of the producer, and then every thread waits. */
#include <pthread.h>
#include <stdio.h>

#define CAPACITY 1
#define PER_CONSUMER 3

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int items[CAPACITY];
static int count, head;

static void put(int item) {
    pthread_mutex_lock(&lock);
    while (count == CAPACITY)
        pthread_cond_wait(&changed, &lock);
    items[(head + count) % CAPACITY] = item;
    count++;
    pthread_cond_signal(&changed);
    pthread_mutex_unlock(&lock);
}

static int take(void) {
    pthread_mutex_lock(&lock);
    while (count == 0)
        pthread_cond_wait(&changed, &lock);
    int item = items[head];
    head = (head + 1) % CAPACITY;
    count--;
    pthread_cond_signal(&changed);
    pthread_mutex_unlock(&lock);
    return item;
}

static void *consumer(void *arg) {
    long sum = 0;
    for (int i = 0; i < PER_CONSUMER; i++)
        sum += take();
    *(long *)arg = sum;
    return NULL;
}

int main(void) {
    pthread_t consumers[2];
    long sums[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&consumers[i], NULL, consumer, &sums[i]);
    for (int item = 1; item <= 2 * PER_CONSUMER; item++)
        put(item);
    for (int i = 0; i < 2; i++)
        pthread_join(consumers[i], NULL);
    printf("consumed total: %ld\n", sums[0] + sums[1]);
    return 0;
}
