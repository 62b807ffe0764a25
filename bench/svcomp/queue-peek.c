extern void abort(void);
#include <assert.h>
void reach_error() { assert(0); }
#include <pthread.h>
#include <stdlib.h>

struct node { int value; struct node *next; };
struct node *head = 0;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void put(int v) {
  struct node *n = malloc(sizeof *n);
  n->value = v;
  pthread_mutex_lock(&m);
  n->next = head;
  head = n;
  pthread_mutex_unlock(&m);
}

int take(void) {
  if (head == 0) return -1;            /* peeks without the lock */
  pthread_mutex_lock(&m);
  struct node *n = head;
  if (n == 0) { ERROR: {reach_error(); abort();} }
  head = n->next;
  pthread_mutex_unlock(&m);
  int v = n->value;
  free(n);
  return v;
}

void *producer(void *arg) { put(7); return 0; }
void *consumer(void *arg) { take(); return 0; }

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
