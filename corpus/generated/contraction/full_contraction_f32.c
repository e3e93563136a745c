/*
 * full contraction of two three-index tensors with a permutation, s += A[a][b][c] B[c][b][a],
 * returned as a scalar (float).
 */
float full_contraction_f32(int na, int nb, int nc, float A[na][nb][nc], float B[nc][nb][na])
{
    float s = 0.0f;

    for (int a = 0; a < na; a++)
        for (int b = 0; b < nb; b++)
            for (int c = 0; c < nc; c++)
                s += A[a][b][c] * B[c][b][a];
    return s;
}
