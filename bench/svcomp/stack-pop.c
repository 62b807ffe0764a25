extern void abort(void);
#include <assert.h>
void reach_error() { assert(0); }
#include <pthread.h>

#define SIZE 4
int stack[SIZE];
int top = 0;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void push(int v) {
  pthread_mutex_lock(&m);
  if (top < SIZE) stack[top++] = v;
  pthread_mutex_unlock(&m);
}

int pop(void) {
  int v;
  if (top == 0) return -1;          /* checked outside the lock */
  pthread_mutex_lock(&m);
  if (top == 0) { ERROR: {reach_error(); abort();} }  /* underflow */
  v = stack[--top];
  pthread_mutex_unlock(&m);
  return v;
}

void *producer(void *arg) { push(1); return 0; }
void *consumer(void *arg) { pop(); return 0; }

int main() {
  pthread_t p, c1, c2;
  pthread_create(&p, 0, producer, 0);
  pthread_create(&c1, 0, consumer, 0);
  pthread_create(&c2, 0, consumer, 0);
  pthread_join(p, 0);
  pthread_join(c1, 0);
  pthread_join(c2, 0);
  return 0;
}
