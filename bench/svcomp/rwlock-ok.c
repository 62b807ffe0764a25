extern void abort(void);
#include <assert.h>
void reach_error() { assert(0); }
#include <pthread.h>

pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
int low = 0, high = 0;   /* invariant: low == high */

void *writer(void *arg) {
  for (int i = 0; i < 2; i++) {
    pthread_rwlock_wrlock(&lock);
    low++;
    high++;
    pthread_rwlock_unlock(&lock);
  }
  return 0;
}

void *reader(void *arg) {
  pthread_rwlock_rdlock(&lock);
  if (low != high) { ERROR: {reach_error(); abort();} }
  pthread_rwlock_unlock(&lock);
  return 0;
}

int main() {
  pthread_t w, r1, r2;
  pthread_create(&w, 0, writer, 0);
  pthread_create(&r1, 0, reader, 0);
  pthread_create(&r2, 0, reader, 0);
  pthread_join(w, 0);
  pthread_join(r1, 0);
  pthread_join(r2, 0);
  return 0;
}
