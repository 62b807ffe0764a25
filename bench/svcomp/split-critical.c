extern void abort(void);
#include <assert.h>
void reach_error() { assert(0); }
void __VERIFIER_assert(int expression) { if (!expression) { ERROR: {reach_error();abort();}}; return; }
#include <pthread.h>

int balance = 100;
pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* reads under the lock, writes under the lock, but not in one section */
void *deposit(void *arg) {
  int amount = *(int *)arg;
  int seen;
  pthread_mutex_lock(&lock);
  seen = balance;
  pthread_mutex_unlock(&lock);
  pthread_mutex_lock(&lock);
  balance = seen + amount;
  pthread_mutex_unlock(&lock);
  return 0;
}

int main() {
  pthread_t a, b;
  int ten = 10, twenty = 20;
  pthread_create(&a, 0, deposit, &ten);
  pthread_create(&b, 0, deposit, &twenty);
  pthread_join(a, 0);
  pthread_join(b, 0);
  __VERIFIER_assert(balance == 130);
  return 0;
}
