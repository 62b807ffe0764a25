extern void abort(void);
#include <assert.h>
void reach_error() { assert(0); }
#include <pthread.h>

_Thread_local int calls = 0;
int results[2];

void count(void) { calls++; }

void *worker(void *arg) {
  int me = (int)(long)arg;
  for (int i = 0; i <= me; i++) count();
  results[me] = calls;
  return 0;
}

int main() {
  pthread_t a, b;
  pthread_create(&a, 0, worker, (void *)0);
  pthread_create(&b, 0, worker, (void *)1);
  pthread_join(a, 0);
  pthread_join(b, 0);
  if (results[0] != 1 || results[1] != 2 || calls != 0) { ERROR: {reach_error(); abort();} }
  return 0;
}
