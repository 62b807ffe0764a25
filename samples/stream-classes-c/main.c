/*
 * Two thread-safe classes in C for `weft gen`, each next to a correct twin.
 *
 * bstream: a buffered input stream over a source whose byte at offset k is
 * k % 256. read() takes one byte, filling the buffer from the source when
 * it is empty; skip(n) drops up to n bytes. Its skip asks how many bytes
 * are buffered and then moves past them in a second critical section, so a
 * read in between leaves the position past the buffered bytes: later reads
 * return bytes that were never buffered, and the stream's offset runs
 * ahead of the source. cbstream_* do both in one critical section.
 *
 * series: a time series with listeners. add(v) appends a value under the
 * series' lock, then tells every listener under the listeners' lock; a new
 * listener starts from the series' total (series lock) and is registered
 * afterwards (listeners lock), so a value added in between is counted twice
 * or not at all: the listener's total and the series' disagree. cseries_*
 * take both locks, series first, for add and listen.
 */
#include <pthread.h>
#include "weft.h"
#include "weft_class.h"

#define EXPORT(name) __attribute__((export_name(name)))
#define MAX_OBJECTS 16
#define BUFFER 4
#define MAX_LISTENERS 8

/* ---- bstream / cbstream ------------------------------------------------ */

struct bstream {
    pthread_mutex_t lock;
    unsigned char buf[BUFFER];
    int pos, count;
    long long source; /* offset of the next byte the source gives */
};

static struct bstream streams[MAX_OBJECTS];
static int stream_count;
static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;

static struct bstream *stream(int h) {
    pthread_mutex_lock(&streams_lock);
    struct bstream *s = h >= 0 && h < stream_count ? &streams[h] : 0;
    pthread_mutex_unlock(&streams_lock);
    return s;
}

static int stream_new(void) {
    pthread_mutex_lock(&streams_lock);
    int h = stream_count < MAX_OBJECTS ? stream_count++ : -1;
    if (h >= 0) {
        pthread_mutex_init(&streams[h].lock, 0);
        streams[h].pos = streams[h].count = 0;
        streams[h].source = 0;
    }
    pthread_mutex_unlock(&streams_lock);
    return h;
}

/* With the lock held: the buffer holds at least one unread byte. */
static void fill(struct bstream *s) {
    if (s->pos < s->count) return;
    for (int i = 0; i < BUFFER; i++) s->buf[i] = (unsigned char)((s->source + i) % 256);
    s->source += BUFFER;
    s->pos = 0;
    s->count = BUFFER;
}

/* With the lock held: the offset of the next byte read(). */
static long long offset(const struct bstream *s) { return s->source - (s->count - s->pos); }

static int stream_read(int h) {
    struct bstream *s = stream(h);
    if (!s) return -1;
    pthread_mutex_lock(&s->lock);
    fill(s);
    weft_assert(s->pos < s->count, "read past the buffered bytes");
    long long at = offset(s);
    int byte = s->buf[s->pos++];
    pthread_mutex_unlock(&s->lock);
    weft_assert(byte == at % 256, "read a byte from another offset");
    return byte;
}

static int stream_skip(int h, int n, int atomic) {
    struct bstream *s = stream(h);
    if (!s || n < 0) return -1;
    pthread_mutex_lock(&s->lock);
    int available = s->count - s->pos;
    if (!atomic) {
        pthread_mutex_unlock(&s->lock);
        pthread_mutex_lock(&s->lock);
    }
    int skipped = n < available ? n : available;
    s->pos += skipped;
    pthread_mutex_unlock(&s->lock);
    return skipped;
}

static int stream_available(int h) {
    struct bstream *s = stream(h);
    if (!s) return -1;
    pthread_mutex_lock(&s->lock);
    int available = s->count - s->pos;
    pthread_mutex_unlock(&s->lock);
    weft_assert(available >= 0, "more bytes consumed than buffered");
    return available;
}

static int stream_offset(int h) {
    struct bstream *s = stream(h);
    if (!s) return -1;
    pthread_mutex_lock(&s->lock);
    long long at = offset(s);
    pthread_mutex_unlock(&s->lock);
    return (int)at;
}

EXPORT("bstream_new") int bstream_new(void) { return stream_new(); }
EXPORT("bstream_read") int bstream_read(int h) { return stream_read(h); }
EXPORT("bstream_skip") int bstream_skip(int h, int n) { return stream_skip(h, n, 0); }
EXPORT("bstream_available") int bstream_available(int h) { return stream_available(h); }
EXPORT("bstream_offset") int bstream_offset(int h) { return stream_offset(h); }

EXPORT("cbstream_new") int cbstream_new(void) { return stream_new(); }
EXPORT("cbstream_read") int cbstream_read(int h) { return stream_read(h); }
EXPORT("cbstream_skip") int cbstream_skip(int h, int n) { return stream_skip(h, n, 1); }
EXPORT("cbstream_available") int cbstream_available(int h) { return stream_available(h); }
EXPORT("cbstream_offset") int cbstream_offset(int h) { return stream_offset(h); }

/* ---- series / cseries -------------------------------------------------- */

struct series {
    pthread_mutex_t lock;           /* the values */
    pthread_mutex_t listeners_lock; /* the listeners */
    long long total;
    int values;
    long long heard[MAX_LISTENERS]; /* each listener's running total */
    int listeners;
};

static struct series all_series[MAX_OBJECTS];
static int series_count;
static pthread_mutex_t series_registry = PTHREAD_MUTEX_INITIALIZER;

static struct series *series_at(int h) {
    pthread_mutex_lock(&series_registry);
    struct series *s = h >= 0 && h < series_count ? &all_series[h] : 0;
    pthread_mutex_unlock(&series_registry);
    return s;
}

static int series_make(void) {
    pthread_mutex_lock(&series_registry);
    int h = series_count < MAX_OBJECTS ? series_count++ : -1;
    if (h >= 0) {
        struct series *s = &all_series[h];
        pthread_mutex_init(&s->lock, 0);
        pthread_mutex_init(&s->listeners_lock, 0);
        s->total = 0;
        s->values = s->listeners = 0;
    }
    pthread_mutex_unlock(&series_registry);
    return h;
}

static int series_add(int h, int v, int atomic) {
    struct series *s = series_at(h);
    if (!s) return -1;
    pthread_mutex_lock(&s->lock);
    s->total += v;
    int values = ++s->values;
    if (!atomic) pthread_mutex_unlock(&s->lock);
    pthread_mutex_lock(&s->listeners_lock);
    for (int i = 0; i < s->listeners; i++) s->heard[i] += v;
    pthread_mutex_unlock(&s->listeners_lock);
    if (atomic) pthread_mutex_unlock(&s->lock);
    return values;
}

/* A new listener, which starts knowing the series' total. */
static int series_listen(int h, int atomic) {
    struct series *s = series_at(h);
    if (!s) return -1;
    pthread_mutex_lock(&s->lock);
    long long start = s->total;
    if (!atomic) pthread_mutex_unlock(&s->lock);
    pthread_mutex_lock(&s->listeners_lock);
    int id = s->listeners < MAX_LISTENERS ? s->listeners++ : -1;
    if (id >= 0) s->heard[id] = start;
    pthread_mutex_unlock(&s->listeners_lock);
    if (atomic) pthread_mutex_unlock(&s->lock);
    return id;
}

/* Checks that every listener heard exactly the series' values. */
static int series_check(int h) {
    struct series *s = series_at(h);
    if (!s) return -1;
    pthread_mutex_lock(&s->lock);
    pthread_mutex_lock(&s->listeners_lock);
    int agree = 1;
    for (int i = 0; i < s->listeners; i++) agree &= s->heard[i] == s->total;
    long long total = s->total;
    pthread_mutex_unlock(&s->listeners_lock);
    pthread_mutex_unlock(&s->lock);
    weft_assert(agree, "a listener's total differs from the series' total");
    return (int)total;
}

EXPORT("series_new") int series_new(void) { return series_make(); }
EXPORT("series_add") int series_add_value(int h, int v) { return series_add(h, v, 0); }
EXPORT("series_listen") int series_listen_new(int h) { return series_listen(h, 0); }
EXPORT("series_check") int series_check_totals(int h) { return series_check(h); }

EXPORT("cseries_new") int cseries_new(void) { return series_make(); }
EXPORT("cseries_add") int cseries_add_value(int h, int v) { return series_add(h, v, 1); }
EXPORT("cseries_listen") int cseries_listen_new(int h) { return series_listen(h, 1); }
EXPORT("cseries_check") int cseries_check_totals(int h) { return series_check(h); }

int main(int argc, char **argv) { return weft_class_serve(argc, argv); }
