extern void abort(void);
#include <assert.h>
void reach_error() { assert(0); }
extern int __VERIFIER_nondet_int(void);
extern void __VERIFIER_assume(int);
#include <pthread.h>

int slots[4];
int picks[2];

void *writer(void *arg) {
  int me = (int)(long)arg;
  slots[picks[me]] = me + 1;           /* two writers may pick one slot */
  return 0;
}

int main() {
  for (int i = 0; i < 2; i++) {
    picks[i] = __VERIFIER_nondet_int();
    __VERIFIER_assume(0 <= picks[i] && picks[i] < 4);
  }
  pthread_t a, b;
  pthread_create(&a, 0, writer, (void *)0);
  pthread_create(&b, 0, writer, (void *)1);
  pthread_join(a, 0);
  pthread_join(b, 0);
  int sum = 0;
  for (int i = 0; i < 4; i++) sum += slots[i];
  if (sum != 3 && picks[0] != picks[1]) { ERROR: {reach_error(); abort();} }
  return 0;
}
