/* The heap-cost benchmark's C workload: rounds of many small strings
 * allocated, kept in a table, and freed, like the Rust workload's maps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 40;
    size_t n = 100000;
    char **table = malloc(n * sizeof(char *));
    unsigned long checksum = 0;
    for (int r = 0; r < rounds; r++) {
        for (size_t i = 0; i < n; i++) {
            char buf[64];
            int len = snprintf(buf, sizeof buf, "value %zu of round %d", i, r);
            table[i] = malloc((size_t)len + 1 + (i % 7) * 8);
            memcpy(table[i], buf, (size_t)len + 1);
        }
        for (size_t i = 0; i < n; i++) {
            checksum += (unsigned char)table[i][6];
            free(table[i]);
        }
    }
    free(table);
    printf("%lu\n", checksum);
    return 0;
}
