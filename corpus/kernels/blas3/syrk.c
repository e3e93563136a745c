/* syrk: lower triangle of C <- beta * C + alpha * A A^T, fixed sizes. */
#define N 100
#define M 80

void syrk_lower(double alpha, double beta, double C[N][N], double A[N][M])
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j <= i; j++) {
            C[i][j] = beta * C[i][j];
            for (int k = 0; k < M; k++)
                C[i][j] += alpha * A[i][k] * A[j][k];
        }
}
