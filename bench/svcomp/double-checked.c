extern void abort(void);
#include <assert.h>
void reach_error() { assert(0); }
#include <pthread.h>
#include <stdlib.h>

struct settings { int level; };
struct settings *instance = 0;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

struct settings *get(void) {
  if (instance == 0) {                 /* unsynchronised first check */
    pthread_mutex_lock(&m);
    if (instance == 0) {
      struct settings *s = malloc(sizeof *s);
      s->level = 3;
      instance = s;
    }
    pthread_mutex_unlock(&m);
  }
  return instance;
}

void *user(void *arg) {
  if (get()->level != 3) { ERROR: {reach_error(); abort();} }
  return 0;
}

int main() {
  pthread_t a, b;
  pthread_create(&a, 0, user, 0);
  pthread_create(&b, 0, user, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
