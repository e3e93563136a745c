/*
 * back substitution (column form), walking columns from the right, in place (double).
 */
void trsv_upper_axpy_f64(int n, double U[n][n], double x[n])
{
    int j, i;

    for (j = n - 1; j >= 0; j--) {
        x[j] = x[j] / (U[j][j] + n);
        for (i = 0; i < j; i++)
            x[i] -= U[i][j] * x[j];
    }
}
