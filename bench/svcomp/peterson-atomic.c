extern void abort(void);
#include <assert.h>
void reach_error() { assert(0); }
#include <pthread.h>
#include <stdatomic.h>

atomic_int flag[2];
atomic_int turn;
int inside = 0;

void *worker(void *arg) {
  int me = (int)(long)arg, other = 1 - me;
  atomic_store(&flag[me], 1);
  atomic_store(&turn, other);
  while (atomic_load(&flag[other]) && atomic_load(&turn) == other) {}
  inside++;
  if (inside != 1) { ERROR: {reach_error(); abort();} }
  inside--;
  atomic_store(&flag[me], 0);
  return 0;
}

int main() {
  pthread_t a, b;
  pthread_create(&a, 0, worker, (void *)0);
  pthread_create(&b, 0, worker, (void *)1);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
