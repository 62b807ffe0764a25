extern void abort(void);
#include <assert.h>
void reach_error() { assert(0); }
#include <pthread.h>

int total = 0;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void *worker(void *arg) {
  long n = (long)arg;
  pthread_mutex_lock(&m);
  total += n;
  pthread_mutex_unlock(&m);
  pthread_exit((void *)(n * n));
  return 0;
}

int main() {
  pthread_t t[3];
  long sum = 0;
  for (long i = 0; i < 3; i++) pthread_create(&t[i], 0, worker, (void *)(i + 1));
  for (int i = 0; i < 3; i++) { void *r; pthread_join(t[i], &r); sum += (long)r; }
  if (sum != 14 || total != 6) { ERROR: {reach_error(); abort();} }
  return 0;
}
