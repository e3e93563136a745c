/* In-place LU factorisation without pivoting, k-i-j (right-looking) order. */
#define N 120

void lu_inplace(double A[N][N])
{
    int i, j, k;

    for (k = 0; k < N; k++)
        for (i = k + 1; i < N; i++) {
            A[i][k] /= A[k][k];
            for (j = k + 1; j < N; j++)
                A[i][j] -= A[i][k] * A[k][j];
        }
}
