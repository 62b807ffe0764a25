/* A notice board: writers format a notice and copy it onto the board,
 * readers copy it off and print it, all under the board's lock. The C
 * library's string and stdio functions read and write the program's
 * buffers. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define WRITERS 2
#define READERS 2

static char board[64] = "empty";
static unsigned notices;
static pthread_mutex_t board_lock = PTHREAD_MUTEX_INITIALIZER;

static void *writer(void *arg)
{
    int id = (int)(long)arg;
    char notice[64];
    snprintf(notice, sizeof notice, "notice %d from writer %d", id * 10, id);
    pthread_mutex_lock(&board_lock);
    if (strcmp(board, notice) != 0) {
        strcpy(board, notice);
        notices++;
    }
    pthread_mutex_unlock(&board_lock);
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    char seen[64];
    pthread_mutex_lock(&board_lock);
    memcpy(seen, board, sizeof seen);
    size_t length = strlen(board);
    pthread_mutex_unlock(&board_lock);
    printf("read %zu bytes: %s\n", length, seen);
    fwrite(seen, 1, length, stdout);
    fputc('\n', stdout);
    return NULL;
}

int main(void)
{
    pthread_t threads[WRITERS + READERS];
    for (long i = 0; i < WRITERS; i++)
        pthread_create(&threads[i], NULL, writer, (void *)(i + 1));
    for (long i = 0; i < READERS; i++)
        pthread_create(&threads[WRITERS + i], NULL, reader, NULL);
    for (int i = 0; i < WRITERS + READERS; i++)
        pthread_join(threads[i], NULL);
    printf("%u notices, last: %s\n", notices, board);
    return 0;
}
