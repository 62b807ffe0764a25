extern void abort(void);
#include <assert.h>
void reach_error() { assert(0); }
#include <pthread.h>

int data = 0;
int ready = 0;

void *writer(void *arg) {
  data = 42;
  ready = 1;
  return 0;
}

void *reader(void *arg) {
  if (ready) {
    if (data != 42) { ERROR: {reach_error(); abort();} }
  }
  return 0;
}

int main() {
  pthread_t w, r;
  pthread_create(&w, 0, writer, 0);
  pthread_create(&r, 0, reader, 0);
  pthread_join(w, 0);
  pthread_join(r, 0);
  return 0;
}
