/*
 * dot product (float).
 */
float dot_f32(int n, float x[n], float y[n])
{
    float s = 0.0f;

    for (int i = 0; i < n; ++i)
        s += x[i] * y[i];
    return s;
}
