#include <math.h>

/*
 * Euclidean norm of every column: squares accumulated row by row, then square roots (marked
 * region, two nests) (double).
 */
void col_norms_f64(int n, int m, double A[n][m], double nrm[m])
{
#pragma scop
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j)
            nrm[j] += A[i][j] * A[i][j];
    for (int j = 0; j < m; ++j)
        nrm[j] = sqrt(nrm[j]);
#pragma endscop
}
