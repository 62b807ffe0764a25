extern void abort(void);
#include <assert.h>
void reach_error() { assert(0); }
extern void __VERIFIER_atomic_begin(void);
extern void __VERIFIER_atomic_end(void);
#include <pthread.h>

#define ROUNDS 3
int i = 1, j = 1;

void *t1(void *arg) {
  for (int k = 0; k < ROUNDS; k++) {
    __VERIFIER_atomic_begin();
    i = i + j;
    __VERIFIER_atomic_end();
  }
  return 0;
}

void *t2(void *arg) {
  for (int k = 0; k < ROUNDS; k++) {
    __VERIFIER_atomic_begin();
    j = j + i;
    __VERIFIER_atomic_end();
  }
  return 0;
}

int main() {
  pthread_t a, b;
  pthread_create(&a, 0, t1, 0);
  pthread_create(&b, 0, t2, 0);
  __VERIFIER_atomic_begin();
  int big = i > 21 || j > 21;
  __VERIFIER_atomic_end();
  /* 21 is the largest value 3 + 3 steps reach (when they alternate) */
  if (big) { ERROR: {reach_error(); abort();} }
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
