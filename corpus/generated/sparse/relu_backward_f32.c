/*
 * ReLU gradient: gin[i] = gout[i] where the input was positive (float).
 */
void relu_backward_f32(int n, int m, float act[n][m], float gout[n][m], float gin[n][m])
{
    int i, j;

    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++) {
            gin[i][j] = 0.0f;
            if (act[i][j] > 0.0f)
                gin[i][j] = gout[i][j];
        }
}
