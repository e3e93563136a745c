/*
 * gbmv: banded matrix-vector product with kl sub-diagonals and ku
 * super-diagonals (A stored as a full n x n array). Loop bounds use min/max
 * macros; the dot product goes through a local accumulator.
 */
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))

void gbmv(int n, int kl, int ku, double A[n][n], double x[n], double y[n])
{
    for (int i = 0; i < n; i++) {
        double acc = 0.0;
        for (int j = MAX(0, i - kl); j <= MIN(n - 1, i + ku); j++)
            acc += A[i][j] * x[j];
        y[i] = acc;
    }
}
