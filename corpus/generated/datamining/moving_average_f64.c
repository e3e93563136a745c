/*
 * moving average over a window of w samples for m series (double).
 */
void moving_average_f64(int n, int m, int w, double X[n + w][m], double Y[n][m])
{
    int i, j, k;

    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++) {
            double acc = 0.0;
            for (k = 0; k < w; k++)
                acc += X[i + k][j];
            Y[i][j] = acc / w;
        }
}
