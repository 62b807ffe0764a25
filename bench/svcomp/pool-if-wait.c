extern void abort(void);
#include <assert.h>
void reach_error() { assert(0); }
#include <pthread.h>

int available = 0;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t more = PTHREAD_COND_INITIALIZER;

void *taker(void *arg) {
  pthread_mutex_lock(&m);
  if (available == 0)                  /* should be a loop */
    pthread_cond_wait(&more, &m);
  available--;
  if (available < 0) { ERROR: {reach_error(); abort();} }
  pthread_mutex_unlock(&m);
  return 0;
}

void *giver(void *arg) {
  pthread_mutex_lock(&m);
  available++;
  pthread_cond_broadcast(&more);
  pthread_mutex_unlock(&m);
  return 0;
}

int main() {
  pthread_t t1, t2, g1, g2;
  pthread_create(&t1, 0, taker, 0);
  pthread_create(&t2, 0, taker, 0);
  pthread_create(&g1, 0, giver, 0);
  pthread_join(g1, 0);
  pthread_create(&g2, 0, giver, 0);
  pthread_join(g2, 0);
  pthread_join(t1, 0);
  pthread_join(t2, 0);
  return 0;
}
