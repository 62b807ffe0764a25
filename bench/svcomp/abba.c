extern void abort(void);
#include <assert.h>
void reach_error() { assert(0); }
#include <pthread.h>

pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;
int shared = 0;

void *left(void *arg) {
  pthread_mutex_lock(&a);
  pthread_mutex_lock(&b);
  shared++;
  pthread_mutex_unlock(&b);
  pthread_mutex_unlock(&a);
  return 0;
}

void *right(void *arg) {
  pthread_mutex_lock(&b);
  pthread_mutex_lock(&a);
  shared++;
  pthread_mutex_unlock(&a);
  pthread_mutex_unlock(&b);
  return 0;
}

int main() {
  pthread_t l, r;
  pthread_create(&l, 0, left, 0);
  pthread_create(&r, 0, right, 0);
  pthread_join(l, 0);
  pthread_join(r, 0);
  /* the lock order can deadlock, which is not this property's error */
  if (shared != 2) { ERROR: {reach_error(); abort();} }
  return 0;
}
