#include <math.h>

/*
 * Euclidean norm of every row (local accumulator, sqrt) (float).
 */
void row_norms_f32(int n, int m, float A[n][m], float nrm[n])
{
    int i, j;

    for (i = 0; i < n; i++) {
        float acc = 0.0f;
        for (j = 0; j < m; j++)
            acc += A[i][j] * A[i][j];
        nrm[i] = sqrtf(acc);
    }
}
