extern void abort(void);
#include <assert.h>
void reach_error() { assert(0); }
#include <pthread.h>
#include <stdatomic.h>

atomic_uint next_ticket, now_serving;
int shared = 0;

void lock(void) {
  unsigned mine = atomic_fetch_add(&next_ticket, 1);
  while (atomic_load(&now_serving) != mine) {}
}

void unlock(void) { atomic_fetch_add(&now_serving, 1); }

void *worker(void *arg) {
  lock();
  int seen = shared;
  shared = seen + 1;
  unlock();
  return 0;
}

int main() {
  pthread_t a, b, c;
  pthread_create(&a, 0, worker, 0);
  pthread_create(&b, 0, worker, 0);
  pthread_create(&c, 0, worker, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  pthread_join(c, 0);
  if (shared != 3) { ERROR: {reach_error(); abort();} }
  return 0;
}
