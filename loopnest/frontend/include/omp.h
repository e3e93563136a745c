/* perfembed's stand-in for <omp.h> during analysis: declarations only, as pycparser's fake libc. */
#ifndef PERFEMBED_FAKE_OMP_H
#define PERFEMBED_FAKE_OMP_H
typedef int omp_lock_t;
int omp_get_num_threads(void);
int omp_get_max_threads(void);
int omp_get_thread_num(void);
void omp_set_num_threads(int);
double omp_get_wtime(void);
#endif
