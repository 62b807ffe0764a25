#include "stats.h"

static long total;
static int items;

/* Called by every consumer, after it took an item from the buffer. */
void stats_record(int item)
{
    total += item;
    items++;
}

long stats_total(void) { return total; }

int stats_items(void) { return items; }
