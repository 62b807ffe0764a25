extern void abort(void);
#include <assert.h>
void reach_error() { assert(0); }
#include <pthread.h>

pthread_once_t once = PTHREAD_ONCE_INIT;
int table[4];
int inits = 0;

void build_table(void) {
  inits++;
  for (int i = 0; i < 4; i++) table[i] = i * i;
}

void *user(void *arg) {
  pthread_once(&once, build_table);
  if (table[3] != 9) { ERROR: {reach_error(); abort();} }
  return 0;
}

int main() {
  pthread_t a, b;
  pthread_create(&a, 0, user, 0);
  pthread_create(&b, 0, user, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  if (inits != 1) { ERROR: {reach_error(); abort();} }
  return 0;
}
