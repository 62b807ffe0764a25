extern void abort(void);
#include <assert.h>
void reach_error() { assert(0); }
#include <pthread.h>

int initialized = 0;
int inits = 0;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void init_once(void) {
  if (!initialized) {            /* check, then act: not atomic */
    pthread_mutex_lock(&m);
    inits++;
    pthread_mutex_unlock(&m);
    initialized = 1;
  }
}

void *user(void *arg) { init_once(); return 0; }

int main() {
  pthread_t a, b;
  pthread_create(&a, 0, user, 0);
  pthread_create(&b, 0, user, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  if (inits != 1) { ERROR: {reach_error(); abort();} }
  return 0;
}
