extern void abort(void);
#include <assert.h>
void reach_error() { assert(0); }
#include <pthread.h>

#define CAP 2
#define ITEMS 3
int buf[CAP];
int count = 0, head = 0, tail = 0;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;

void *producer(void *arg) {
  for (int i = 1; i <= ITEMS; i++) {
    pthread_mutex_lock(&m);
    while (count == CAP) pthread_cond_wait(&not_full, &m);
    buf[tail] = i; tail = (tail + 1) % CAP; count++;
    pthread_cond_signal(&not_empty);
    pthread_mutex_unlock(&m);
  }
  return 0;
}

void *consumer(void *arg) {
  int expect = 1;
  for (int i = 0; i < ITEMS; i++) {
    pthread_mutex_lock(&m);
    while (count == 0) pthread_cond_wait(&not_empty, &m);
    int v = buf[head]; head = (head + 1) % CAP; count--;
    pthread_cond_signal(&not_full);
    pthread_mutex_unlock(&m);
    if (v != expect) { ERROR: {reach_error(); abort();} }
    expect++;
  }
  return 0;
}

int main() {
  pthread_t p, c;
  pthread_create(&p, 0, producer, 0);
  pthread_create(&c, 0, consumer, 0);
  pthread_join(p, 0);
  pthread_join(c, 0);
  return 0;
}
