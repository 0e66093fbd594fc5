/* The heap-cost benchmark's allocation-heavy C workload (issue #51):
 * PAIRS malloc/free pairs (default 5 M), sizes 16-4096 B drawn by a fixed
 * generator, each block freed 64 allocations later, so nearly all the
 * time is malloc and free. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    long pairs = argc > 1 ? atol(argv[1]) : 5000000;
    enum { WINDOW = 64 };
    unsigned char *live[WINDOW] = {0};
    unsigned x = 12345u;
    unsigned long checksum = 0;
    for (long i = 0; i < pairs; i++) {
        x = x * 1103515245u + 12345u;
        size_t size = 16 + (size_t)((x >> 8) % 4081u);
        int k = (int)(i % WINDOW);
        free(live[k]);
        live[k] = malloc(size);
        if (!live[k])
            return 1;
        live[k][0] = (unsigned char)i;
        checksum += live[k][0];
    }
    for (int k = 0; k < WINDOW; k++)
        free(live[k]);
    printf("%lu\n", checksum);
    return 0;
}
