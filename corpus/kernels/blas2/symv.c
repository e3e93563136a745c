/*
 * symv: y <- y + A x where A is symmetric and only its lower triangle is read.
 * Each off-diagonal entry contributes to two outputs.
 */
void symv_lower(int n, double A[n][n], double x[n], double y[n])
{
    int i, j;

    for (i = 0; i < n; i++) {
        for (j = 0; j < i; j++) {
            y[i] += A[i][j] * x[j];
            y[j] += A[i][j] * x[i];
        }
        y[i] += A[i][i] * x[i];
    }
}
