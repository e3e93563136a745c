/*
 * forward substitution (column/axpy form), x overwritten in place, diagonal shifted by n (double).
 */
void trsv_lower_axpy_f64(int n, double L[n][n], double x[n])
{
    for (int j = 0; j < n; j++) {
        x[j] = x[j] / (L[j][j] + n);
        for (int i = j + 1; i < n; i++)
            x[i] -= L[i][j] * x[j];
    }
}
