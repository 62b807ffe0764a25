extern void abort(void);
#include <assert.h>
void reach_error() { assert(0); }
#include <pthread.h>

#define N 3
pthread_barrier_t phase;
int produced[N];
int sums[N];

void *worker(void *arg) {
  int me = (int)(long)arg;
  produced[me] = me + 1;
  pthread_barrier_wait(&phase);
  int sum = 0;
  for (int i = 0; i < N; i++) sum += produced[i];
  sums[me] = sum;
  return 0;
}

int main() {
  pthread_t t[N];
  pthread_barrier_init(&phase, 0, N);
  for (long i = 0; i < N; i++) pthread_create(&t[i], 0, worker, (void *)i);
  for (int i = 0; i < N; i++) pthread_join(t[i], 0);
  for (int i = 0; i < N; i++)
    if (sums[i] != 6) { ERROR: {reach_error(); abort();} }
  return 0;
}
