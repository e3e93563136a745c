/*
 * LU factorisation without pivoting, right-looking (kij) form, in place (double).
 */
void lu_kij_f64(int n, double A[n][n])
{
    for (int k = 0; k < n; ++k) {
        for (int i = k + 1; i < n; ++i)
            A[i][k] /= A[k][k];
        for (int i = k + 1; i < n; ++i)
            for (int j = k + 1; j < n; ++j)
                A[i][j] -= A[i][k] * A[k][j];
    }
}
