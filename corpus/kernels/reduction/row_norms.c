#include <math.h>

/* Euclidean norm of every row of a float matrix (local accumulator, sqrtf). */
void row_norms(int m, int n, float A[m][n], float nrm[m])
{
    for (int i = 0; i < m; i++) {
        float s = 0.0f;
        for (int j = 0; j < n; j++)
            s += A[i][j] * A[i][j];
        nrm[i] = sqrtf(s);
    }
}
