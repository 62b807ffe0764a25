/* Counts what went through the pipeline. */
#ifndef STATS_H
#define STATS_H

void stats_record(int item);
long stats_total(void);
int stats_items(void);

#endif
